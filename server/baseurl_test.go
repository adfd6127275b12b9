package server

import "testing"

func TestBaseURLFor(t *testing.T) {
	for _, tc := range []struct{ name, addr, want string }{
		{"OK", ":8080", "http://localhost:8080"},
		{"Moved", ":18420", "http://localhost:18420"},
		{"Loopback", "127.0.0.1:18421", "http://127.0.0.1:18421"},
		{"Unspecified", "0.0.0.0:9000", "http://localhost:9000"},
		{"UnspecifiedIPv6", "[::]:9000", "http://localhost:9000"},
		{"IPv6", "[::1]:9000", "http://[::1]:9000"},
		{"Named", "box.local:8443", "http://box.local:8443"},
		{"Port80", "example.test:80", "http://example.test"},
		{"HostOnly", "example.test", "http://example.test"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := BaseURLFor(tc.addr); got != tc.want {
				t.Fatalf("BaseURLFor(%q) = %q, want %q", tc.addr, got, tc.want)
			}
		})
	}
}
