package store_test

import (
	"testing"

	"github.com/boxoffice/boxoffice/store"
)

func TestTypedCode(t *testing.T) {
	for _, tc := range []struct{ name, typed, want string }{
		{"OK", "ABCDEFGHJKLM", "ABCDEFGHJKLM"},
		{"Printed", "ABCD EFGH JKLM", "ABCDEFGHJKLM"},
		{"LowerCase", "abcd efgh jklm", "ABCDEFGHJKLM"},
		{"Hyphens", "abcd-efgh-jklm", "ABCDEFGHJKLM"},
		{"PastedWithLineBreaks", "  ABCD\tEFGH\nJKLM\u00a0", "ABCDEFGHJKLM"},
		{"OtherTextKept", "ABCD_EFGH", "ABCD_EFGH"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := store.TypedCode(tc.typed); got != tc.want {
				t.Fatalf("TypedCode(%q) = %q, want %q", tc.typed, got, tc.want)
			}
		})
	}
}
