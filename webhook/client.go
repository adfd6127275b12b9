package webhook

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// Timeout bounds one delivery attempt.
const Timeout = 10 * time.Second

// NewClient returns the HTTP client deliveries use: a short timeout, no
// redirects followed, and, unless allowPrivate, a dialer that refuses every
// special-purpose address (loopback, private, link-local and cloud
// metadata, NAT64, 6to4, benchmarking, reserved, …: see Special). The
// check runs on the address actually dialled, after DNS, just before the
// connection is made, so a name that resolves to an internal address is
// refused too, whatever it resolved to when the URL was saved.
func NewClient(allowPrivate bool) *http.Client { return newClient(allowPrivate, nil) }

// newClient is NewClient; dialled, when set, is called with every address
// that passed the check just before it is connected to, and its error
// stops the dial (tests count dials with it).
func newClient(allowPrivate bool, dialled func(netip.AddrPort) error) *http.Client {
	// A receiver that does not take the connection, or the TLS handshake,
	// within seconds will not answer within Timeout either: give up early
	// and free the worker.
	dialer := &net.Dialer{Timeout: 3 * time.Second}
	dialer.Control = func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("%w: refusing to dial %s", ErrGiveUp, address)
		}
		if !allowPrivate {
			if block := Special(ap.Addr()); block != "" {
				return fmt.Errorf("%w: %s is not a public address (%s)", ErrGiveUp, ap.Addr(), block)
			}
		}
		if dialled != nil {
			return dialled(ap)
		}
		return nil
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.DialContext = dialer.DialContext
	transport.Proxy = nil // a proxy would dial on our behalf and bypass the check
	transport.TLSHandshakeTimeout = 5 * time.Second
	return &http.Client{
		Timeout:   Timeout,
		Transport: transport,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}
