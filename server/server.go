// Package server is the whole program built in one place: its
// configuration (Config), the database and every service (Main), the
// public HTTP handler, the admin listener with the health checks, and
// serving until told to stop. The command line (boxcli) and the end-to-end
// tests open a Main, use it and close it.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/boxoffice/boxoffice/accounts"
	"github.com/boxoffice/boxoffice/admission"
	"github.com/boxoffice/boxoffice/auth"
	"github.com/boxoffice/boxoffice/cancellation"
	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/checkin"
	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/graph"
	"github.com/boxoffice/boxoffice/idempotency"
	"github.com/boxoffice/boxoffice/jobs"
	"github.com/boxoffice/boxoffice/live"
	"github.com/boxoffice/boxoffice/mail"
	"github.com/boxoffice/boxoffice/observe"
	"github.com/boxoffice/boxoffice/payments"
	"github.com/boxoffice/boxoffice/payments/devpay"
	"github.com/boxoffice/boxoffice/payments/paystack"
	"github.com/boxoffice/boxoffice/provision"
	"github.com/boxoffice/boxoffice/ratelimit"
	"github.com/boxoffice/boxoffice/readcache"
	"github.com/boxoffice/boxoffice/refunds"
	"github.com/boxoffice/boxoffice/resolvers"
	"github.com/boxoffice/boxoffice/rest"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/ticketdoc"
	"github.com/boxoffice/boxoffice/tickets"
	"github.com/boxoffice/boxoffice/webhook"
)

// Config is the service's configuration (docs/operator.md, "Configuration").
type Config struct {
	// DatabaseURL is sqlite://PATH or postgres://…; Addr is where serve
	// listens.
	DatabaseURL string
	Addr        string
	// AdminAddr is the admin listener of serve (/metrics and health);
	// empty disables it.
	AdminAddr string
	// AdminHosts are the host names the admin listener answers besides IP
	// literals and localhost (ADMIN_HOSTS); any other Host gets 421.
	AdminHosts []string
	// PublicBaseURL is the base of every URL the service hands out.
	PublicBaseURL string
	// AllowPrivateWebhooks accepts http:// and private webhook targets.
	AllowPrivateWebhooks bool
	// SandboxExpiry and LiveExpiry are how long a pending checkout lives.
	SandboxExpiry time.Duration
	LiveExpiry    time.Duration
	// FreeDailyAppCap and FreeDailyBuyerEventCap cap live free tickets per UTC day.
	FreeDailyAppCap        int64
	FreeDailyBuyerEventCap int64
	// FreeDailyAccountCap caps live free tickets per account per UTC day,
	// all its apps together.
	FreeDailyAccountCap int64
	// WebhookRetryBase is the first webhook retry delay.
	WebhookRetryBase time.Duration
	// WebhookAppConcurrency is how many deliveries of one app run at once
	// on an instance (webhook.Slots); WebhookDisableAfter is how long an
	// endpoint may fail before deliveries to it stop.
	WebhookAppConcurrency int
	WebhookDisableAfter   time.Duration
	// Jobs tunes background work (tests shorten its intervals).
	Jobs jobs.Config
	// RedisURL, when set, holds the rate-limit counters every instance shares.
	RedisURL string
	// TrustedProxies are the CIDRs whose X-Forwarded-For is believed.
	TrustedProxies string
	// RateLimits are the limits of spec section 8, per app and per account.
	RateLimits ratelimit.Config
	// RateLimitDelay is how long a request refused for a rate limit is
	// held before its 429 is sent (admission.Tarpit); 0 answers at once.
	RateLimitDelay time.Duration
	// MaxAppsPerAccount is how many apps one account may have.
	MaxAppsPerAccount int
	// CatalogIndexEvents is the most visible events the catalog's listing
	// index keeps in memory; a larger catalog is listed from the database.
	CatalogIndexEvents int
	// MaxBodyBytes bounds every request body.
	MaxBodyBytes int64
	// GraphQLLimits bound a GraphQL document before it is parsed.
	GraphQLLimits graph.DocumentLimits
	// Clock is every service's clock; nil is the real one (tests move
	// their own instead of sleeping).
	Clock func() time.Time
	// ReadyClock is the clock of /readyz's cached state; nil is the real
	// one (tests move their own to let the state age without sleeping).
	ReadyClock func() time.Time
	// Live bounds each app's and each account's subscriptions and
	// WebSocket connections per instance, and sets how often SQLite is
	// polled for changes.
	Live live.Config
	// LiveInitTimeout bounds how long a WebSocket may take to send
	// connection_init; LivePingInterval is how often the server pings one.
	LiveInitTimeout  time.Duration
	LivePingInterval time.Duration
	// PaymentProvider takes live payments: "paystack", "dev" (development
	// only, explicitly), or "" (none: live paid checkout answers 503);
	// PaystackSecretKey and PaystackBaseURL are Paystack's secret key and
	// the base of its API.
	PaymentProvider   string
	PaystackSecretKey string
	PaystackBaseURL   string
	// LiveFreeDisabled switches live free checkout off.
	LiveFreeDisabled bool
	// Portal configures the developer portal: session length and sign-in
	// limits (its BaseURL is PublicBaseURL).
	Portal accounts.Config
	// Password are the costs of portal password hashes (tests lower them);
	// zero means auth.DefaultPasswordParams.
	Password auth.PasswordParams
	// WebhookStreams tunes the event streams `boxoffice listen` reads.
	WebhookStreams webhook.StreamConfig
	// SMTPURL is the mail server of ticket emails; empty sends them to the
	// development mailbox. MailFrom is their sender; MailRetryBase the
	// first delay of their retries.
	SMTPURL       string
	MailFrom      string
	MailRetryBase time.Duration
}

// BaseURLFor is PUBLIC_BASE_URL's default: the server that listens on addr
// (ADDR), as a browser on this machine reaches it. An unspecified or
// missing host is localhost, so ":18420" is http://localhost:18420; an addr
// that is not host:port is taken as a host.
func BaseURLFor(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		host, port = addr, ""
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	if port == "" || port == "80" {
		return "http://" + hostOnly(host)
	}
	return "http://" + net.JoinHostPort(host, port)
}

// hostOnly brackets an IPv6 address for a URL without a port.
func hostOnly(host string) string {
	if strings.Contains(host, ":") {
		return "[" + host + "]"
	}
	return host
}

// DefaultConfig returns the defaults docs/operator.md documents.
func DefaultConfig() Config {
	d := checkout.DefaultConfig()
	return Config{
		DatabaseURL: store.DefaultURL, Addr: ":8080", AdminAddr: "127.0.0.1:9090", PublicBaseURL: BaseURLFor(":8080"),
		SandboxExpiry: d.SandboxExpiry, LiveExpiry: d.LiveExpiry,
		FreeDailyAppCap: d.FreeDailyAppCap, FreeDailyBuyerEventCap: d.FreeDailyBuyerEventCap, FreeDailyAccountCap: d.FreeDailyAccountCap,
		WebhookRetryBase: webhook.DefaultRetryBase, Jobs: jobs.DefaultConfig(),
		WebhookAppConcurrency: webhook.DefaultPerApp, WebhookDisableAfter: webhook.DefaultDisableAfter,
		RateLimits: ratelimit.DefaultConfig(), RateLimitDelay: admission.DefaultTarpitDelay, MaxAppsPerAccount: provision.DefaultMaxAppsPerAccount, MaxBodyBytes: 1 << 20,
		CatalogIndexEvents: catalog.DefaultIndexEvents,
		GraphQLLimits:      graph.DefaultDocumentLimits(),
		Live:               live.DefaultConfig(),
		LiveInitTimeout:    graph.DefaultLive().InitTimeout, LivePingInterval: graph.DefaultLive().PingInterval,
		Portal:         accounts.DefaultConfig(),
		WebhookStreams: webhook.DefaultStreamConfig(),
		MailFrom:       mail.DefaultFrom, MailRetryBase: jobs.DefaultMailRetryBase,
	}
}

// Main is the whole program, built in one place: configuration, database
// and every service. Commands and tests open one, use it, and close it.
type Main struct {
	// Config is what New built the program from, DB its database, Log
	// where it logs, Now every service's clock (Config.Clock or the real
	// one). Catalog and the services after it are each named for their
	// package and built by New over DB; Resolver is what both APIs call.
	Config  Config
	DB      *store.DB
	Log     *slog.Logger
	Now     func() time.Time
	Catalog *catalog.Service
	// ReadCache keeps what catalog readers derive between catalog changes.
	ReadCache   *readcache.Cache
	Auth        *auth.Authenticator
	Provision   *provision.Service
	Portal      *accounts.Service
	Idempotency *idempotency.Service
	Checkout    *checkout.Service
	// Refunds makes refunds and returns their money.
	Refunds *refunds.Service
	// Cancellations cancels dates and refunds their orders.
	Cancellations *cancellation.Service
	Tickets       *tickets.Service
	// TicketPDFs keeps the PDFs of orders' tickets, one render per
	// version, for the ticket page and the ticket email.
	TicketPDFs *ticketdoc.PDFCache
	// CheckIns decides and records the door's scans.
	CheckIns *checkin.Service
	// Mail sends ticket emails: SMTP, or the development mailbox.
	Mail      mail.Sender
	Webhooks  *webhook.Service
	Streams   *webhook.Streams
	Jobs      *jobs.Runner
	Limits    *ratelimit.Limits
	Admission *admission.Gate
	Metrics   *observe.Metrics
	Payments  payments.Provider
	devPay    *devpay.Provider
	Resolver  *resolvers.Resolver
	// Listener is the process's one PostgreSQL LISTEN connection, shared
	// by the catalog watch, Live and the webhook event streams.
	Listener *store.Listener
	// CatalogWatch tells the catalog cache when the catalog changed.
	CatalogWatch *store.Watch
	// TenantWatch tells Tenants when accounts, apps, keys or scanners
	// changed.
	TenantWatch *store.Watch
	// Tenants keeps key lookups and apps between those changes.
	Tenants *readcache.Tenants
	// Live fans order and stock changes out to GraphQL subscriptions.
	Live *live.Hub
	// Mailbox is the development mailbox, shown at /mail on the admin
	// listener and by `boxoffice mail`.
	Mailbox *mail.Mailbox

	limitStore *ratelimit.Store
	trusted    []netip.Prefix
	ready      *readiness
}

// Open connects to the database and builds the services; it does not migrate.
func Open(ctx context.Context, cfg Config, log *slog.Logger) (*Main, error) {
	db, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	m, err := New(cfg, db, log)
	if err != nil {
		db.Close()
		return nil, err
	}
	return m, nil
}

// New builds the services over an open database.
func New(cfg Config, db *store.DB, log *slog.Logger) (*Main, error) {
	now := func() time.Time { return time.Now().UTC() }
	if cfg.Clock != nil {
		now = func() time.Time { return cfg.Clock().UTC() }
	}
	m := &Main{Config: cfg, DB: db, Log: log, Now: now, ready: &readiness{db: db, now: time.Now}}
	if cfg.ReadyClock != nil {
		m.ready.now = cfg.ReadyClock
	}
	var err error
	if m.trusted, err = ratelimit.ParseTrusted(cfg.TrustedProxies); err != nil {
		return nil, err
	}
	if m.limitStore, err = ratelimit.NewStore(context.Background(), cfg.RedisURL, log); err != nil {
		return nil, err
	}
	m.Limits = ratelimit.NewLimits(m.limitStore, cfg.RateLimits)
	m.Metrics = observe.NewMetrics(db.DB.DB,
		func(ctx context.Context) (map[string]int, error) { return store.JobCounts(ctx, db) },
		func(ctx context.Context) (map[string]int, error) { return store.RefundReviewCounts(ctx, db) })
	m.Listener = store.NewListener(db, log)
	m.CatalogWatch = store.NewCatalogWatch(db, m.Listener)
	m.Catalog = &catalog.Service{DB: db, Now: now}
	if db.Postgres() {
		// Only PostgreSQL's notifications name what changed; on SQLite
		// every change would read the whole catalog again.
		m.Catalog.Index = catalog.NewIndex(db, m.CatalogWatch, cfg.CatalogIndexEvents)
	}
	m.ReadCache = readcache.NewCache(db, m.CatalogWatch, now, readcache.DefaultCacheBudget)
	m.Live = live.New(db, m.Listener, cfg.Live, log)
	m.TenantWatch = store.NewTenantWatch(db, m.Listener)
	m.Tenants = readcache.NewTenants(m.TenantWatch, readcache.DefaultTenantEntries)
	m.Auth = &auth.Authenticator{DB: db, Cache: m.Tenants}
	m.Mailbox = &mail.Mailbox{DB: db, Now: now}
	m.Admission = &admission.Gate{Auth: m.Auth, Limits: m.Limits, Tarpit: &admission.Tarpit{
		Delay: cfg.RateLimitDelay, PerClient: admission.DefaultTarpitPerClient, Total: admission.DefaultTarpitTotal}}
	m.Provision = &provision.Service{DB: db, Now: now, AllowPrivateWebhooks: cfg.AllowPrivateWebhooks, Password: cfg.Password,
		MaxAppsPerAccount: cfg.MaxAppsPerAccount, Changed: m.TenantWatch.Changed}
	m.Idempotency = &idempotency.Service{DB: db, Now: now}
	m.Webhooks = &webhook.Service{DB: db, Now: now, Log: log, Client: webhook.NewClient(cfg.AllowPrivateWebhooks),
		AllowPrivate: cfg.AllowPrivateWebhooks, Observe: m.Metrics.Webhook,
		Slots: webhook.NewSlots(cfg.WebhookAppConcurrency, cfg.Jobs.Workers), DisableAfter: cfg.WebhookDisableAfter}
	pc := cfg.Portal
	pc.BaseURL = cfg.PublicBaseURL
	m.Portal = accounts.NewService(db, m.Provision, m.Webhooks, m.limitStore, cfg.RateLimits.Namespace(), now, pc)
	m.Streams = webhook.NewStreams(db, m.Listener, m.Auth, cfg.WebhookStreams, log, func(w http.ResponseWriter, r *http.Request, err error) {
		rest.WriteError(w, r, log, err)
	})
	if err := m.openPayments(cfg); err != nil {
		return nil, err
	}
	if err := mail.CheckFrom(cfg.MailFrom); err != nil {
		return nil, err
	}
	m.Mail = m.Mailbox
	if cfg.SMTPURL != "" {
		if m.Mail, err = mail.NewSMTP(cfg.SMTPURL); err != nil {
			return nil, err
		}
	}
	m.TicketPDFs = &ticketdoc.PDFCache{}
	m.Tickets = &tickets.Service{DB: db, Now: now, PublicBaseURL: cfg.PublicBaseURL, Mail: m.Mail, From: cfg.MailFrom,
		Webhooks: m.Webhooks, PDFs: m.TicketPDFs, ObserveIssued: m.Metrics.TicketsIssued, ObserveEmail: m.Metrics.TicketEmail}
	m.CheckIns = &checkin.Service{DB: db, Dates: readcache.CheckoutCatalog{DB: db}, Webhooks: m.Webhooks, Now: now, Log: log,
		Observe: m.Metrics.CheckIn, UnknownCodes: scannerUnknown{m.Limits}}
	m.Checkout = &checkout.Service{DB: db, Idempotency: m.Idempotency, Webhooks: m.Webhooks, Tickets: m.Tickets, Payments: m.Payments, Now: now, Config: checkout.Config{
		PublicBaseURL: cfg.PublicBaseURL, SandboxExpiry: cfg.SandboxExpiry, LiveExpiry: cfg.LiveExpiry,
		FreeDailyAppCap: cfg.FreeDailyAppCap, FreeDailyBuyerEventCap: cfg.FreeDailyBuyerEventCap, FreeDailyAccountCap: cfg.FreeDailyAccountCap,
		LiveFreeDisabled: cfg.LiveFreeDisabled,
	}, Throttle: func(ctx context.Context, c checkout.Caller) error {
		return m.Admission.Checkout(ctx, c.AccountID, c.AppID, c.Environment)
	}, Observe: m.Metrics.Checkout, Catalog: readcache.CheckoutCatalog{DB: db}, Tenants: m.Tenants}
	if m.devPay != nil {
		m.devPay.Confirm = func(ctx context.Context, st *payments.Status) error {
			_, err := m.Checkout.ConfirmPayment(ctx, st)
			return err
		}
	}
	m.Refunds = &refunds.Service{DB: db, Orders: m.Checkout, Idempotency: m.Idempotency, Webhooks: m.Webhooks,
		Payments: m.Payments, Now: now}
	m.Resolver = &resolvers.Resolver{Catalog: m.Catalog, Checkout: m.Checkout, CheckIns: m.CheckIns, Live: m.Live,
		Refunds: m.Refunds, Webhooks: m.Webhooks, Now: now}
	jc := cfg.Jobs
	jc.RetryBase = cfg.WebhookRetryBase
	jc.MailRetryBase = cfg.MailRetryBase
	m.Cancellations = &cancellation.Service{DB: db, Orders: m.Checkout, Refunds: m.Refunds, Now: now}
	runner, err := jobs.New(db, m.Webhooks, m.Checkout, m.Tickets, m.Idempotency, m.Portal, m.Refunds, m.Cancellations, jc, log)
	if err != nil {
		return nil, err
	}
	m.Jobs = runner
	m.Webhooks.CheckURL = m.Provision.CheckWebhookURL
	m.Webhooks.Enqueue, m.Webhooks.NotifyDisabled = runner.EnqueueDeliveries, runner.EnqueueEndpointDisabledNotice
	m.Tickets.EnqueueEmail = runner.EnqueueTicketEmail
	m.Refunds.EnqueueSend = runner.EnqueueRefund
	m.Refunds.EnqueueEmail = runner.EnqueueRefundEmail
	m.Cancellations.Enqueue = runner.EnqueueCancellation
	m.Refunds.Observe = m.Metrics.Refund
	m.Metrics.WatchRefunds(func(ctx context.Context) (map[string]int, error) {
		counts, err := store.FailedRefundCounts(ctx, db)
		out := make(map[string]int, len(counts))
		for env, n := range counts {
			out[env] = int(n)
		}
		return out, err
	})
	m.Portal.Mail, m.Portal.From, m.Portal.EnqueueNotice = m.Mail, cfg.MailFrom, runner.EnqueueSignUpNotice
	m.Portal.Checkout = m.Checkout
	m.Portal.Refunds = m.Refunds
	return m, nil
}

// openPayments picks the payment provider of PAYMENT_PROVIDER.
func (m *Main) openPayments(cfg Config) error {
	switch cfg.PaymentProvider {
	case "":
		return nil
	case "dev":
		m.devPay = devpay.New(cfg.PublicBaseURL, m.DB, m.Now)
		m.Payments = m.devPay
		return nil
	case "paystack":
		p, err := paystack.New(paystack.Config{SecretKey: cfg.PaystackSecretKey, BaseURL: cfg.PaystackBaseURL})
		if err != nil {
			return fmt.Errorf("PAYMENT_PROVIDER=paystack: %w", err)
		}
		m.Payments = p
		return nil
	}
	return fmt.Errorf("PAYMENT_PROVIDER %q is not one of paystack, dev", cfg.PaymentProvider)
}

// Migrate applies the service's migrations and River's.
func (m *Main) Migrate(ctx context.Context) error {
	if err := store.Migrate(ctx, m.DB); err != nil {
		return err
	}
	return jobs.Migrate(ctx, m.DB)
}

// LimitStore returns the store of the rate-limit counters: memory, or
// Redis shared by every instance.
func (m *Main) LimitStore() *ratelimit.Store { return m.limitStore }

// Close ends live subscriptions and the event streams, and releases the
// listener, the database and Redis.
func (m *Main) Close() error {
	m.Live.Close()
	m.Streams.Close()
	m.Listener.Close()
	return errors.Join(m.limitStore.Close(), m.DB.Close())
}

// Serve answers the API on ln, and /metrics with the health checks on
// admin unless it is nil, until ctx is cancelled; then it shuts down
// gracefully: it stops accepting and lets in-flight requests finish. With
// the development payment provider it first logs devpay.Warning.
func (m *Main) Serve(ctx context.Context, ln, admin net.Listener) error {
	if m.devPay != nil {
		m.Log.Warn(devpay.Warning)
	}
	if off, err := store.AutovacuumOff(ctx, m.DB); err != nil {
		m.Log.Warn("could not read PostgreSQL's autovacuum setting", "err", err)
	} else if off {
		m.Log.Warn(store.AutovacuumWarning)
	}
	servers := []*http.Server{m.HTTPServer(m.Handler())}
	listeners := []net.Listener{ln}
	if admin != nil {
		servers = append(servers, m.HTTPServer(m.AdminHandler()))
		listeners = append(listeners, admin)
	}
	// Event streams never go idle: Shutdown ends them, or it would wait.
	servers[0].RegisterOnShutdown(m.Streams.Close)
	// Jobs get their own context: on shutdown they are stopped after HTTP,
	// so in-flight requests can still enqueue.
	jobsCtx, stopJobs := context.WithCancel(context.WithoutCancel(ctx))
	defer stopJobs()
	if err := m.Jobs.Start(jobsCtx); err != nil {
		return fmt.Errorf("start jobs: %w", err)
	}
	// Shutdown waits for requests, not for hijacked connections: close the
	// WebSockets, which clients then reopen elsewhere.
	servers[0].RegisterOnShutdown(m.Live.Shutdown)
	if ix := m.Catalog.Index; ix != nil {
		// The listing index's first full read starts now, not with the
		// first listing; listings read the database until it is done.
		go func() {
			start := time.Now()
			if err := ix.Warm(ctx); err != nil && ctx.Err() == nil {
				m.Log.Warn("catalog listing index not read; listings read the database", "err", err)
				return
			}
			m.Log.Info("catalog listing index read", "took", time.Since(start).Round(time.Millisecond))
		}()
	}
	errc := make(chan error, len(servers))
	for i, srv := range servers {
		go func() { errc <- srv.Serve(listeners[i]) }()
	}
	var serveErr error
	running := len(servers)
	select {
	case serveErr = <-errc:
		running--
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, srv := range servers {
		if err := srv.Shutdown(shutdown); err != nil {
			serveErr = errors.Join(serveErr, fmt.Errorf("shutdown: %w", err))
		}
	}
	for ; running > 0; running-- {
		if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
			serveErr = errors.Join(serveErr, err)
		}
	}
	if err := m.Jobs.Stop(shutdown); err != nil {
		serveErr = errors.Join(serveErr, fmt.Errorf("stop jobs: %w", err))
	}
	return serveErr
}

// HTTPServer returns a server of h with the service's timeouts.
func (m *Main) HTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(m.Log.Handler(), slog.LevelWarn),
	}
}

// scannerUnknown is the scanner keys' budget of unknown codes, read from
// the service's limits at each scan, so limits rebuilt in place (a test
// that stops their clock) are the ones that count.
type scannerUnknown struct{ limits *ratelimit.Limits }

// Allow counts one scan of a code that matches no ticket against key's
// budget. Errors: rate_limit_exceeded.
func (u scannerUnknown) Allow(ctx context.Context, key, what string) error {
	return u.limits.ScannerUnknown.Allow(ctx, key, what)
}
