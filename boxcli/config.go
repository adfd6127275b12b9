package boxcli

import (
	"strings"

	"github.com/boxoffice/boxoffice/accounts"
	"github.com/boxoffice/boxoffice/graph"
	"github.com/boxoffice/boxoffice/live"
	"github.com/boxoffice/boxoffice/ratelimit"
	"github.com/boxoffice/boxoffice/server"
	"github.com/boxoffice/boxoffice/webhook"
	"github.com/urfave/cli/v3"
)

// globalFlags are read by every command, each from its flag or environment
// variable. Fresh flags per CLI: urfave/cli keeps values in the flags.
func globalFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "database-url", Value: defaults.DatabaseURL, Sources: cli.EnvVars("DATABASE_URL"),
			Usage: "sqlite://PATH (embedded) or postgres://… (production)"},
		&cli.StringFlag{Name: "addr", Value: defaults.Addr, Sources: cli.EnvVars("ADDR"), Usage: "listen address of serve"},
		&cli.StringFlag{Name: "admin-addr", Value: defaults.AdminAddr, Sources: cli.EnvVars("ADMIN_ADDR"),
			Usage: "listen address of serve's /metrics and health checks, never the public port (empty: none)"},
		&cli.StringSliceFlag{Name: "admin-hosts", Sources: cli.EnvVars("ADMIN_HOSTS"),
			Usage: "comma-separated host names the admin listener answers besides IP literals and localhost (others: 421)"},
		&cli.StringFlag{Name: "public-base-url", Sources: cli.EnvVars("PUBLIC_BASE_URL"),
			Usage: "base of every URL the service hands out (default: the server --addr names, " + defaults.PublicBaseURL + " for " + defaults.Addr + ")"},
		&cli.BoolFlag{Name: "webhook-allow-private-targets", Sources: cli.EnvVars("WEBHOOK_ALLOW_PRIVATE_TARGETS"),
			Usage: "allow http:// and private-network webhook URLs (development and tests only)"},
		&cli.DurationFlag{Name: "sandbox-expiry", Value: defaults.SandboxExpiry, Sources: cli.EnvVars("SANDBOX_EXPIRY"),
			Usage: "how long a pending sandbox checkout lives"},
		&cli.DurationFlag{Name: "live-expiry", Value: defaults.LiveExpiry, Sources: cli.EnvVars("LIVE_EXPIRY"),
			Usage: "how long a pending live checkout lives"},
		&cli.Int64Flag{Name: "free-daily-app-cap", Value: defaults.FreeDailyAppCap, Sources: cli.EnvVars("FREE_DAILY_APP_CAP"),
			Usage: "live free tickets per app per UTC day"},
		&cli.Int64Flag{Name: "free-daily-account-cap", Value: defaults.FreeDailyAccountCap, Sources: cli.EnvVars("FREE_DAILY_ACCOUNT_CAP"),
			Usage: "live free tickets per account per UTC day, all its apps together"},
		&cli.DurationFlag{Name: "webhook-retry-base", Value: defaults.WebhookRetryBase, Sources: cli.EnvVars("WEBHOOK_RETRY_BASE"),
			Usage: "first webhook retry delay; attempt n waits about base·2^(n-1)"},
		&cli.IntFlag{Name: "webhook-app-concurrency", Value: defaults.WebhookAppConcurrency, Sources: cli.EnvVars("WEBHOOK_APP_CONCURRENCY"),
			Usage: "most webhook deliveries of one account's apps together running at once on one instance (at most half the workers; one while its receiver fails)"},
		&cli.DurationFlag{Name: "webhook-disable-after", Value: defaults.WebhookDisableAfter, Sources: cli.EnvVars("WEBHOOK_DISABLE_AFTER"),
			Usage: "how long every delivery to a webhook URL may fail before deliveries to it stop until the partner resumes them"},
		&cli.Int64Flag{Name: "free-daily-buyer-event-cap", Value: defaults.FreeDailyBuyerEventCap, Sources: cli.EnvVars("FREE_DAILY_BUYER_EVENT_CAP"),
			Usage: "live free tickets per buyer per event per UTC day"},
		&cli.StringFlag{Name: "redis-url", Sources: cli.EnvVars("REDIS_URL"),
			Usage: "Redis for rate-limit counters shared by every instance (redis://host:6379/0)"},
		&cli.StringFlag{Name: "trusted-proxies", Sources: cli.EnvVars("TRUSTED_PROXIES"),
			Usage: "comma-separated CIDRs whose X-Forwarded-For is believed for the client IP"},
		&cli.IntFlag{Name: "rate-limit-failed-auth", Value: defaults.RateLimits.FailedAuth, Sources: cli.EnvVars("RATE_LIMIT_FAILED_AUTH"),
			Usage: "failed authentication attempts per client IP per window"},
		&cli.IntFlag{Name: "rate-limit-live", Value: defaults.RateLimits.LiveApp, Sources: cli.EnvVars("RATE_LIMIT_LIVE"),
			Usage: "requests per live app per window"},
		&cli.IntFlag{Name: "rate-limit-test", Value: defaults.RateLimits.TestApp, Sources: cli.EnvVars("RATE_LIMIT_TEST"),
			Usage: "requests per test app per window"},
		&cli.IntFlag{Name: "rate-limit-checkout", Value: defaults.RateLimits.Checkout, Sources: cli.EnvVars("RATE_LIMIT_CHECKOUT"),
			Usage: "checkout creates per app and environment per window"},
		&cli.IntFlag{Name: "rate-limit-ticket-pages", Value: defaults.RateLimits.TicketPages, Sources: cli.EnvVars("RATE_LIMIT_TICKET_PAGES"),
			Usage: "requests for buyers' ticket pages and their PDFs per client IP per window"},
		&cli.DurationFlag{Name: "rate-limit-window", Value: defaults.RateLimits.Window, Sources: cli.EnvVars("RATE_LIMIT_WINDOW"),
			Usage: "the window of every rate limit"},
		&cli.DurationFlag{Name: "rate-limit-delay", Value: defaults.RateLimitDelay, Sources: cli.EnvVars("RATE_LIMIT_DELAY"),
			Usage: "how long a request refused for a rate limit waits before its 429 is sent (at most its Retry-After; 0 answers at once)"},
		&cli.IntFlag{Name: "scanner-unknown-codes-per-minute", Value: defaults.RateLimits.ScannerUnknownCodes,
			Sources: cli.EnvVars("SCANNER_UNKNOWN_CODES_PER_MINUTE"),
			Usage:   "scans of codes that match no ticket a scanner key may make per minute; beyond: 429, not recorded"},
		&cli.IntFlag{Name: "account-limit-multiple", Value: defaults.RateLimits.AccountMultiple, Sources: cli.EnvVars("ACCOUNT_LIMIT_MULTIPLE"),
			Usage: "an account's apps together get at most this many times one app's request, checkout, WebSocket and subscription limits"},
		&cli.IntFlag{Name: "max-apps-per-account", Value: defaults.MaxAppsPerAccount, Sources: cli.EnvVars("MAX_APPS_PER_ACCOUNT"),
			Usage: "most apps one account may have"},
		&cli.IntFlag{Name: "catalog-index-events", Value: defaults.CatalogIndexEvents, Sources: cli.EnvVars("CATALOG_INDEX_EVENTS"),
			Usage: "most visible events the listing index keeps in memory (about 200 bytes each); a larger catalog is listed from the database"},
		&cli.StringFlag{Name: "payment-provider", Sources: cli.EnvVars("PAYMENT_PROVIDER"),
			Usage: "live payments: paystack, or dev (development only; never for real buyers)"},
		&cli.StringFlag{Name: "paystack-secret-key", Sources: cli.EnvVars("PAYSTACK_SECRET_KEY"),
			Usage: "Paystack secret key (sk_…)"},
		&cli.StringFlag{Name: "paystack-base-url", Sources: cli.EnvVars("PAYSTACK_BASE_URL"),
			Usage: "Paystack API base (default https://api.paystack.co)"},
		&cli.BoolFlag{Name: "live-free-checkout", Value: true, Sources: cli.EnvVars("LIVE_FREE_CHECKOUT"),
			Usage: "allow live free checkout (false answers 503 free_checkout_unavailable)"},
		&cli.IntFlag{Name: "webhook-streams-per-app", Value: defaults.WebhookStreams.PerApp, Sources: cli.EnvVars("WEBHOOK_STREAMS_PER_APP"),
			Usage: "most webhook event streams (boxoffice listen) one app may hold open on one instance"},
		&cli.Int64Flag{Name: "max-body-bytes", Value: defaults.MaxBodyBytes, Sources: cli.EnvVars("MAX_BODY_BYTES"),
			Usage: "largest request body accepted"},
		&cli.DurationFlag{Name: "portal-session-ttl", Value: defaults.Portal.SessionTTL, Sources: cli.EnvVars("PORTAL_SESSION_TTL"),
			Usage: "how long a developer portal sign-in lasts"},
		&cli.DurationFlag{Name: "portal-reset-ttl", Value: defaults.Portal.ResetTTL, Sources: cli.EnvVars("PORTAL_RESET_TTL"),
			Usage: "how long a password reset link (accounts reset-link) works"},
		&cli.IntFlag{Name: "portal-signin-per-ip", Value: defaults.Portal.SignInPerIP, Sources: cli.EnvVars("PORTAL_SIGNIN_PER_IP"),
			Usage: "portal sign-in and sign-up attempts per client IP per --portal-signin-window"},
		&cli.IntFlag{Name: "portal-signin-per-account", Value: defaults.Portal.SignInPerAccount, Sources: cli.EnvVars("PORTAL_SIGNIN_PER_ACCOUNT"),
			Usage: "portal sign-in attempts per email address per --portal-signin-window"},
		&cli.DurationFlag{Name: "portal-signin-window", Value: defaults.Portal.SignInWindow, Sources: cli.EnvVars("PORTAL_SIGNIN_WINDOW"),
			Usage: "the window of the portal's sign-in limits"},
		&cli.IntFlag{Name: "portal-test-events-per-app", Value: defaults.Portal.TestEventsPerApp, Sources: cli.EnvVars("PORTAL_TEST_EVENTS_PER_APP"),
			Usage: "test webhook events one app may send from the portal per minute"},
		&cli.IntFlag{Name: "graphql-max-bytes", Value: defaults.GraphQLLimits.Bytes, Sources: cli.EnvVars("GRAPHQL_MAX_BYTES"),
			Usage: "largest GraphQL document, in bytes, read before parsing"},
		&cli.IntFlag{Name: "graphql-max-tokens", Value: defaults.GraphQLLimits.Tokens, Sources: cli.EnvVars("GRAPHQL_MAX_TOKENS"),
			Usage: "most lexical tokens in a GraphQL document"},
		&cli.IntFlag{Name: "graphql-max-fields", Value: defaults.GraphQLLimits.Fields, Sources: cli.EnvVars("GRAPHQL_MAX_FIELDS"),
			Usage: "most field selections in a GraphQL document, fragments counted where spread"},
		&cli.IntFlag{Name: "graphql-max-aliases", Value: defaults.GraphQLLimits.Aliases, Sources: cli.EnvVars("GRAPHQL_MAX_ALIASES"),
			Usage: "most aliased fields in a GraphQL document"},
		&cli.IntFlag{Name: "graphql-max-fragments", Value: defaults.GraphQLLimits.Fragments, Sources: cli.EnvVars("GRAPHQL_MAX_FRAGMENTS"),
			Usage: "most fragment definitions in a GraphQL document"},
		&cli.IntFlag{Name: "graphql-max-spreads", Value: defaults.GraphQLLimits.Spreads, Sources: cli.EnvVars("GRAPHQL_MAX_SPREADS"),
			Usage: "most fragment spreads written in a GraphQL document"},
		&cli.IntFlag{Name: "graphql-max-subscriptions", Value: defaults.Live.MaxSubscriptions, Sources: cli.EnvVars("GRAPHQL_MAX_SUBSCRIPTIONS"),
			Usage: "live subscriptions one app (per environment) may hold open on this instance"},
		&cli.IntFlag{Name: "graphql-max-connections", Value: defaults.Live.MaxConnections, Sources: cli.EnvVars("GRAPHQL_MAX_CONNECTIONS"),
			Usage: "GraphQL WebSocket connections one app (per environment) may hold open on this instance"},
		&cli.DurationFlag{Name: "live-poll-interval", Value: defaults.Live.PollInterval, Sources: cli.EnvVars("LIVE_POLL_INTERVAL"),
			Usage: "how often SQLite is asked for order and stock changes while anyone subscribes (PostgreSQL notifies)"},
		&cli.StringFlag{Name: "smtp-url", Sources: cli.EnvVars("SMTP_URL"),
			Usage: "mail server of ticket emails: smtp://user:pass@host:port (STARTTLS unless loopback) or smtps://… (unset: the development mailbox at the admin listener's /mail)"},
		&cli.StringFlag{Name: "mail-from", Value: defaults.MailFrom, Sources: cli.EnvVars("MAIL_FROM"),
			Usage: "sender of ticket emails"},
		&cli.DurationFlag{Name: "mail-retry-base", Value: defaults.MailRetryBase, Sources: cli.EnvVars("MAIL_RETRY_BASE"),
			Usage: "first retry delay of a ticket email, doubling; retried for at least an hour"},
		&cli.IntFlag{Name: "graphql-max-nesting", Value: defaults.GraphQLLimits.Depth, Sources: cli.EnvVars("GRAPHQL_MAX_NESTING"),
			Usage: "deepest nesting of selection sets as written in a GraphQL document"},
	}
}

// defaults are the flags' values when neither flag nor variable is set.
var defaults = server.DefaultConfig()

// publicBaseURL is PUBLIC_BASE_URL, or the server ADDR names when it is
// unset: a shell that moved ADDR off 8080 gets links, door URLs and curl
// lines that reach its own server, from serve and every other command.
func publicBaseURL(cmd *cli.Command) string {
	if u := strings.TrimRight(cmd.String("public-base-url"), "/"); u != "" {
		return u
	}
	return server.BaseURLFor(cmd.String("addr"))
}

// configFrom is the program's configuration as cmd's flags and their
// environment variables give it.
func configFrom(cmd *cli.Command) server.Config {
	return server.Config{
		DatabaseURL:            cmd.String("database-url"),
		Addr:                   cmd.String("addr"),
		AdminAddr:              cmd.String("admin-addr"),
		AdminHosts:             cmd.StringSlice("admin-hosts"),
		PublicBaseURL:          publicBaseURL(cmd),
		AllowPrivateWebhooks:   cmd.Bool("webhook-allow-private-targets"),
		SandboxExpiry:          cmd.Duration("sandbox-expiry"),
		LiveExpiry:             cmd.Duration("live-expiry"),
		FreeDailyAppCap:        cmd.Int64("free-daily-app-cap"),
		FreeDailyBuyerEventCap: cmd.Int64("free-daily-buyer-event-cap"),
		FreeDailyAccountCap:    cmd.Int64("free-daily-account-cap"),
		WebhookRetryBase:       cmd.Duration("webhook-retry-base"),
		SMTPURL:                cmd.String("smtp-url"),
		MailFrom:               cmd.String("mail-from"),
		MailRetryBase:          cmd.Duration("mail-retry-base"),
		WebhookAppConcurrency:  cmd.Int("webhook-app-concurrency"),
		WebhookDisableAfter:    cmd.Duration("webhook-disable-after"),
		Jobs:                   defaults.Jobs,
		RedisURL:               cmd.String("redis-url"),
		TrustedProxies:         cmd.String("trusted-proxies"),
		RateLimits: ratelimit.Config{
			FailedAuth: cmd.Int("rate-limit-failed-auth"), LiveApp: cmd.Int("rate-limit-live"),
			TestApp: cmd.Int("rate-limit-test"), Checkout: cmd.Int("rate-limit-checkout"),
			TicketPages: cmd.Int("rate-limit-ticket-pages"),
			Window:      cmd.Duration("rate-limit-window"), AccountMultiple: cmd.Int("account-limit-multiple"),
			ScannerUnknownCodes: cmd.Int("scanner-unknown-codes-per-minute"),
			Prefix:              defaults.RateLimits.Prefix,
		},
		RateLimitDelay:     cmd.Duration("rate-limit-delay"),
		MaxAppsPerAccount:  cmd.Int("max-apps-per-account"),
		CatalogIndexEvents: cmd.Int("catalog-index-events"),
		MaxBodyBytes:       cmd.Int64("max-body-bytes"),
		GraphQLLimits: graph.DocumentLimits{
			Bytes: cmd.Int("graphql-max-bytes"), Tokens: cmd.Int("graphql-max-tokens"),
			Fields: cmd.Int("graphql-max-fields"), Aliases: cmd.Int("graphql-max-aliases"),
			Fragments: cmd.Int("graphql-max-fragments"), Spreads: cmd.Int("graphql-max-spreads"),
			Depth: cmd.Int("graphql-max-nesting"),
		},
		Live: live.Config{
			MaxSubscriptions: cmd.Int("graphql-max-subscriptions"), MaxConnections: cmd.Int("graphql-max-connections"),
			AccountMultiple: cmd.Int("account-limit-multiple"), PollInterval: cmd.Duration("live-poll-interval"),
		},
		LiveInitTimeout: defaults.LiveInitTimeout, LivePingInterval: defaults.LivePingInterval,
		PaymentProvider:   cmd.String("payment-provider"),
		PaystackSecretKey: cmd.String("paystack-secret-key"),
		PaystackBaseURL:   cmd.String("paystack-base-url"),
		LiveFreeDisabled:  !cmd.Bool("live-free-checkout"),
		WebhookStreams: webhook.StreamConfig{PerApp: cmd.Int("webhook-streams-per-app"),
			Poll: defaults.WebhookStreams.Poll, Heartbeat: defaults.WebhookStreams.Heartbeat},
		Portal: accounts.Config{
			SessionTTL: cmd.Duration("portal-session-ttl"), ResetTTL: cmd.Duration("portal-reset-ttl"),
			SignInPerIP: cmd.Int("portal-signin-per-ip"), SignInPerAccount: cmd.Int("portal-signin-per-account"),
			SignInWindow: cmd.Duration("portal-signin-window"), TestEventsPerApp: cmd.Int("portal-test-events-per-app"),
		},
	}
}
