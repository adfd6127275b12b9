package webhook

import (
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// lastAddr returns the highest address of p.
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 1 << (7 - i%8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// errStop ends a dial that passed the check: tests never connect anywhere.
var errStop = errors.New("test: dial stopped after the check")

// dialCounter is a delivery client whose every dial that passes the check
// is counted and stopped.
type dialCounter struct {
	client *http.Client
	n      atomic.Int32
}

func newDialCounter(allowPrivate bool) *dialCounter {
	d := &dialCounter{}
	d.client = newClient(allowPrivate, func(netip.AddrPort) error {
		d.n.Add(1)
		return errStop
	})
	return d
}

// post sends a delivery to host and returns how many dials it made and
// the error.
func (d *dialCounter) post(t *testing.T, host string) (int, error) {
	t.Helper()
	before := d.n.Load()
	hostPort := strings.ReplaceAll(net.JoinHostPort(host, "443"), "%", "%25") // an IPv6 zone
	req, err := http.NewRequest(http.MethodPost, "https://"+hostPort+"/hook", nil)
	require.NoError(t, err)
	res, err := d.client.Do(req)
	if err == nil {
		res.Body.Close()
	}
	return int(d.n.Load() - before), err
}

func TestSpecialTargetsAreNeverDialled(t *testing.T) {
	t.Parallel()
	d := newDialCounter(false)
	requireRefused := func(t *testing.T, host string) {
		t.Helper()
		dials, err := d.post(t, host)
		require.ErrorIs(t, err, ErrGiveUp, host)
		require.ErrorContains(t, err, "is not a public address", host)
		require.Zero(t, dials, "%s was dialled", host)
	}
	for _, r := range special {
		t.Run(r.prefix.String(), func(t *testing.T) {
			first, last := r.prefix.Masked().Addr(), lastAddr(r.prefix)
			requireRefused(t, first.String())
			requireRefused(t, last.String())
			require.NotEmpty(t, Special(first))
			require.NotEmpty(t, Special(last))
			if first.Is4() {
				requireRefused(t, netip.AddrFrom16(first.As16()).String()) // ::ffff:a.b.c.d
			}
		})
	}
	t.Run("Named", func(t *testing.T) {
		for _, host := range []string{
			"::127.0.0.1", "64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe", "2002:7f00:1::", "2002:a00:1::1",
			"0.0.0.0", "0.1.2.3", "198.18.0.1", "198.19.255.254", "240.0.0.1", "255.255.255.255",
			"fec0::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "169.254.169.254", "fd00:ec2::254",
			"2001::1", "2001:db8::1", "100::1", "fe80::1%lo", "localhost",
		} {
			requireRefused(t, host)
		}
	})
	t.Run("PublicIsDialled", func(t *testing.T) {
		for _, host := range []string{"8.8.8.8", "41.66.192.1", "2001:4860:4860::8888", "2a00:1450:4001::1"} {
			require.Empty(t, Special(netip.MustParseAddr(host)), host)
			dials, err := d.post(t, host)
			require.ErrorIs(t, err, errStop, host)
			require.Equal(t, 1, dials, host)
		}
	})
	t.Run("AllowPrivate", func(t *testing.T) {
		dev := newDialCounter(true)
		for _, host := range []string{"127.0.0.1", "::1", "10.0.0.1", "64:ff9b::7f00:1"} {
			dials, err := dev.post(t, host)
			require.ErrorIs(t, err, errStop, host)
			require.Equal(t, 1, dials, "WEBHOOK_ALLOW_PRIVATE_TARGETS dials %s", host)
		}
	})
}
