package mail

import "testing"

func TestFromSeller(t *testing.T) {
	for _, tc := range []struct{ name, from, seller, want string }{
		{"OK", "Boxoffice <tickets@example.com>", "Chale Shop", `"Chale Shop via Boxoffice" <tickets@example.com>`},
		{"NoDisplayName", "tickets@example.com", "Chale Shop", `"Chale Shop" <tickets@example.com>`},
		{"NotASCII", "Boxoffice <tickets@example.com>", "Café Kɔkɔɔ", "=?utf-8?q?Caf=C3=A9_K=C9=94k=C9=94=C9=94_via_Boxoffice?= <tickets@example.com>"},
		{"NoSeller", "Boxoffice <tickets@example.com>", "", "Boxoffice <tickets@example.com>"},
		{"NotAnAddress", "nobody", "Chale Shop", "nobody"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := FromSeller(tc.from, tc.seller); got != tc.want {
				t.Fatalf("FromSeller(%q, %q) = %s, want %s", tc.from, tc.seller, got, tc.want)
			}
		})
	}
}
