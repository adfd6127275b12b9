package webhook

import "net/netip"

// special is the one table of address blocks a webhook is never sent to:
// every block of IANA's IPv4 and IPv6 Special-Purpose Address Registries
// (RFC 6890 and its updates), whether or not the registry calls it
// globally reachable, because no partner's receiver lives in one, plus
// multicast, the deprecated IPv6 site-local and IPv4-compatible blocks, and
// all IPv6 space outside 2000::/3, the only block IANA allocates for
// global unicast. Dialling, provisioning and the CLI all check this table.
// An IPv4-mapped IPv6 address (::ffff:0:0/96) is checked as the IPv4
// address it carries.
var special = []struct {
	prefix netip.Prefix
	name   string
}{
	// IPv4 Special-Purpose Address Registry.
	{netip.MustParsePrefix("0.0.0.0/8"), `"this network" (RFC 791)`},
	{netip.MustParsePrefix("10.0.0.0/8"), "private use (RFC 1918)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared address space, carrier-grade NAT (RFC 6598)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback (RFC 1122)"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local, cloud metadata (RFC 3927)"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private use (RFC 1918)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignments (RFC 6890)"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation, TEST-NET-1 (RFC 5737)"},
	{netip.MustParsePrefix("192.31.196.0/24"), "AS112-v4 (RFC 7535)"},
	{netip.MustParsePrefix("192.52.193.0/24"), "AMT (RFC 7450)"},
	{netip.MustParsePrefix("192.88.99.0/24"), "deprecated 6to4 relay anycast (RFC 7526)"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private use (RFC 1918)"},
	{netip.MustParsePrefix("192.175.48.0/24"), "direct delegation AS112 service (RFC 7534)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking (RFC 2544)"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation, TEST-NET-2 (RFC 5737)"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation, TEST-NET-3 (RFC 5737)"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved (RFC 1112)"},
	{netip.MustParsePrefix("255.255.255.255/32"), "limited broadcast (RFC 919)"},
	// IPv4 multicast (the multicast registry).
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast (RFC 5771)"},

	// IPv6 Special-Purpose Address Registry.
	{netip.MustParsePrefix("::1/128"), "loopback (RFC 4291)"},
	{netip.MustParsePrefix("::/128"), "unspecified (RFC 4291)"},
	{netip.MustParsePrefix("64:ff9b::/96"), "IPv4/IPv6 translation, NAT64 (RFC 6052)"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local-use IPv4/IPv6 translation (RFC 8215)"},
	{netip.MustParsePrefix("100::/64"), "discard-only (RFC 6666)"},
	{netip.MustParsePrefix("100:0:0:1::/64"), "dummy IPv6 prefix (RFC 9780)"},
	{netip.MustParsePrefix("2001::/23"), "IETF protocol assignments: Teredo, ORCHID, AMT, AS112… (RFC 2928)"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation (RFC 3849)"},
	{netip.MustParsePrefix("2002::/16"), "6to4 (RFC 3056)"},
	{netip.MustParsePrefix("2620:4f:8000::/48"), "direct delegation AS112 service (RFC 7534)"},
	{netip.MustParsePrefix("3fff::/20"), "documentation (RFC 9637)"},
	{netip.MustParsePrefix("5f00::/16"), "segment routing SIDs (RFC 9602)"},
	{netip.MustParsePrefix("fc00::/7"), "unique local (RFC 4193)"},
	{netip.MustParsePrefix("fe80::/10"), "link-local (RFC 4291)"},
	// Deprecated blocks and multicast, outside the registry.
	{netip.MustParsePrefix("::/96"), "deprecated IPv4-compatible (RFC 4291)"},
	{netip.MustParsePrefix("fec0::/10"), "deprecated site-local (RFC 3879)"},
	{netip.MustParsePrefix("ff00::/8"), "multicast (RFC 4291)"},
	// The IPv6 address space registry: outside 2000::/3 nothing is
	// allocated for global unicast.
	{netip.MustParsePrefix("::/3"), "not global unicast (IPv6 address space registry)"},
	{netip.MustParsePrefix("4000::/2"), "not global unicast (IPv6 address space registry)"},
	{netip.MustParsePrefix("8000::/1"), "not global unicast (IPv6 address space registry)"},
}

// Special names the special-purpose block addr is in (see the table
// above), or returns "" when addr is an ordinary public address.
func Special(addr netip.Addr) string {
	if !addr.IsValid() {
		return "not an address"
	}
	addr = addr.Unmap().WithZone("")
	for _, r := range special {
		if r.prefix.Contains(addr) {
			return r.name
		}
	}
	return ""
}

// Public reports whether addr may receive webhooks: it is in no
// special-purpose block.
func Public(addr netip.Addr) bool { return Special(addr) == "" }
