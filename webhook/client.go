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
// redirects followed, and, unless allowPrivate, a dialer that refuses
// loopback, private, link-local (cloud metadata included), unspecified and
// multicast addresses. The check runs on the address actually dialled,
// after DNS, so a name that resolves to an internal address is refused too.
func NewClient(allowPrivate bool) *http.Client {
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	if !allowPrivate {
		dialer.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("webhook: refusing to dial %s", address)
			}
			if !Public(ap.Addr()) {
				return fmt.Errorf("%w: %s is not a public address", ErrGiveUp, ap.Addr())
			}
			return nil
		}
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.DialContext = dialer.DialContext
	transport.Proxy = nil // a proxy would dial on our behalf and bypass the check
	return &http.Client{
		Timeout:   Timeout,
		Transport: transport,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// cgnat is the shared address space of carrier-grade NAT (RFC 6598).
var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// Public reports whether addr may receive webhooks.
func Public(addr netip.Addr) bool {
	addr = addr.Unmap()
	return addr.IsValid() && !addr.IsLoopback() && !addr.IsPrivate() && !addr.IsLinkLocalUnicast() &&
		!addr.IsLinkLocalMulticast() && !addr.IsInterfaceLocalMulticast() && !addr.IsMulticast() &&
		!addr.IsUnspecified() && !cgnat.Contains(addr)
}
