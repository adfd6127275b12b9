package ratelimit

import "time"

// Config holds the limits of spec section 8; zero values take its defaults.
type Config struct {
	FailedAuth int // per client IP
	LiveApp    int // per app with a live key
	TestApp    int // per app with a test key
	Checkout   int // checkout creates per app and environment
	// TicketPages bounds requests for buyers' ticket pages and PDFs per
	// client IP (an IPv6 client per /64): the only public pages that cost
	// a render per request.
	TicketPages int
	Window      time.Duration // the window of every limit
	// AccountMultiple bounds an account's apps together, per environment:
	// at most this many times one app's request and checkout limits, so
	// more apps do not buy more capacity.
	AccountMultiple int
	// ScannerUnknownCodes bounds, per scanner key and minute, the scans of
	// codes that match no ticket (SCANNER_UNKNOWN_CODES_PER_MINUTE).
	ScannerUnknownCodes int
	// Prefix namespaces the counters in Redis (tests use their own).
	Prefix string
}

// DefaultConfig returns the spec's limits.
func DefaultConfig() Config {
	return Config{FailedAuth: 60, LiveApp: 120, TestApp: 240, Checkout: 30, TicketPages: 60, Window: time.Minute, AccountMultiple: 3,
		ScannerUnknownCodes: 120, Prefix: "boxoffice"}
}

// Namespace is the prefix of the configuration's counters: Prefix, or the
// default one.
func (c Config) Namespace() string {
	if c.Prefix == "" {
		return DefaultConfig().Prefix
	}
	return c.Prefix
}

// Limits are the service's limiters. Each per-app limiter has an account
// counterpart keyed by account and environment.
type Limits struct {
	FailedAuth      *Limiter
	LiveApp         *Limiter
	TestApp         *Limiter
	Checkout        *Limiter
	LiveAccount     *Limiter
	TestAccount     *Limiter
	CheckoutAccount *Limiter
	TicketPages     *Limiter
	// ScannerUnknown is the budget of a scanner key (keyed by its id) for
	// scans of codes that match no ticket, per minute whatever Window is.
	ScannerUnknown *Limiter
}

// NewLimits builds the limiters of cfg over s.
func NewLimits(s *Store, cfg Config) *Limits {
	d := DefaultConfig()
	pick := func(v, def int) int {
		if v > 0 {
			return v
		}
		return def
	}
	if cfg.Window <= 0 {
		cfg.Window = d.Window
	}
	ns := cfg.Namespace()
	live, test, checkout := pick(cfg.LiveApp, d.LiveApp), pick(cfg.TestApp, d.TestApp), pick(cfg.Checkout, d.Checkout)
	k := pick(cfg.AccountMultiple, d.AccountMultiple)
	return &Limits{
		FailedAuth:      s.New(ns+":auth", pick(cfg.FailedAuth, d.FailedAuth), cfg.Window),
		LiveApp:         s.New(ns+":app-live", live, cfg.Window),
		TestApp:         s.New(ns+":app-test", test, cfg.Window),
		Checkout:        s.New(ns+":checkout", checkout, cfg.Window),
		LiveAccount:     s.New(ns+":account-live", k*live, cfg.Window),
		TestAccount:     s.New(ns+":account-test", k*test, cfg.Window),
		CheckoutAccount: s.New(ns+":account-checkout", k*checkout, cfg.Window),
		TicketPages:     s.New(ns+":ticket-pages", pick(cfg.TicketPages, d.TicketPages), cfg.Window),
		ScannerUnknown:  s.New(ns+":scanner-unknown", pick(cfg.ScannerUnknownCodes, d.ScannerUnknownCodes), time.Minute),
	}
}

// App returns the per-app limiter of an environment.
func (l *Limits) App(live bool) *Limiter {
	if live {
		return l.LiveApp
	}
	return l.TestApp
}

// Account returns the per-account limiter of an environment.
func (l *Limits) Account(live bool) *Limiter {
	if live {
		return l.LiveAccount
	}
	return l.TestAccount
}
