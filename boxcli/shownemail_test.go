package boxcli

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestShownEmail: the operator's account lists print an address as stored,
// with anything but printable ASCII escaped, so a look-alike kept from
// before the identity rule shows what it is and no escape sequence
// reaches the terminal.
func TestShownEmail(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, in, want string }{
		{"OK", "ama@example.com", "ama@example.com"},
		{"OKIDNAsStored", "ama@xn--bcher-kva.example", "ama@xn--bcher-kva.example"},
		{"ZeroWidthSpace", "b\u200b@victim.test", `b\u200b@victim.test`},
		{"Cyrillic", "б@victim.test", `\u0431@victim.test`},
		{"Escape", "b\x1b[2J@victim.test", `b\x1b[2J@victim.test`},
		{"Space", "b @victim.test", `b @victim.test`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, shownEmail(tt.in))
		})
	}
}
