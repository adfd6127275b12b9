package ratelimit

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// ParseTrusted reads TRUSTED_PROXIES: comma-separated CIDRs or addresses.
func ParseTrusted(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if !strings.Contains(part, "/") {
			a, err := netip.ParseAddr(part)
			if err != nil {
				return nil, fmt.Errorf("TRUSTED_PROXIES: %q is not a CIDR or address", part)
			}
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(part)
		if err != nil {
			return nil, fmt.Errorf("TRUSTED_PROXIES: %q is not a CIDR or address", part)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// ClientIP returns the address a request comes from: the socket peer,
// unless the peer is a trusted proxy, in which case X-Forwarded-For is read
// from the right, skipping trusted proxies, and the first address that is
// not one is the client. A forged header from anyone else changes nothing.
// A hop may carry a port, as some proxies write it ("198.51.100.8:1234",
// "[2001:db8::1]:443"); the port is dropped.
func ClientIP(r *http.Request, trusted []netip.Prefix) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	peer = peer.Unmap().WithZone("")
	if !isTrusted(peer, trusted) {
		return peer.String()
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, ok := parseHop(hops[i])
		if !ok {
			break // a garbled hop: trust nothing before it
		}
		if !isTrusted(a, trusted) {
			return a.String()
		}
		peer = a
	}
	return peer.String()
}

// parseHop reads one X-Forwarded-For hop: an address, with or without a
// port, an IPv6 address with or without brackets.
func parseHop(hop string) (netip.Addr, bool) {
	hop = strings.TrimSpace(hop)
	if ap, err := netip.ParseAddrPort(hop); err == nil {
		return ap.Addr().Unmap().WithZone(""), true
	}
	if inner, ok := strings.CutPrefix(hop, "["); ok {
		if hop, ok = strings.CutSuffix(inner, "]"); !ok {
			return netip.Addr{}, false
		}
	}
	a, err := netip.ParseAddr(hop)
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap().WithZone(""), true
}

// ClientKey returns what a client address counts under in per-client
// limits: an IPv4 address itself, an IPv6 address its /64. An IPv6 host
// is handed a /64 (or more) and may use any address in it, so counting
// single addresses would let one client hop past a limit at will.
func ClientKey(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	a = a.Unmap().WithZone("")
	if a.Is4() {
		return a.String()
	}
	return netip.PrefixFrom(a, 64).Masked().String()
}

func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

type ipKey struct{}

// WithClientIP returns a context carrying the request's client address.
func WithClientIP(ctx context.Context, ip string) context.Context {
	return context.WithValue(ctx, ipKey{}, ip)
}

// ClientIPFrom returns the client address stored by WithClientIP.
func ClientIPFrom(ctx context.Context) string {
	ip, _ := ctx.Value(ipKey{}).(string)
	return ip
}
