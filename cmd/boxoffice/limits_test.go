package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/ratelimit"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"
)

func limits(failedAuth, live, test, checkout int) func(*Config) {
	return func(c *Config) {
		c.RateLimits = ratelimit.Config{FailedAuth: failedAuth, LiveApp: live, TestApp: test, Checkout: checkout,
			Window: time.Minute, Prefix: "t" + rand.Text()}
	}
}

func requireLimited(t *testing.T, res *response, limit int, policy string) {
	t.Helper()
	require.Equal(t, http.StatusTooManyRequests, res.Status, "%s", res.Raw)
	require.Equal(t, "rate_limit_exceeded", res.errorCode())
	ra, err := strconv.Atoi(res.Header.Get("Retry-After"))
	require.NoError(t, err, "Retry-After is whole seconds")
	require.True(t, ra >= 1 && ra <= 120, "Retry-After %d is the time until a slot frees, within two windows", ra)
	require.Equal(t, strconv.Itoa(limit), res.Header.Get("X-RateLimit-Limit"))
	require.Equal(t, "0", res.Header.Get("X-RateLimit-Remaining"))
	require.NotEmpty(t, res.Header.Get("X-RateLimit-Reset"))
	require.Equal(t, fmt.Sprintf("%q;q=%d;w=60", policy, limit), res.Header.Get("RateLimit-Policy"))
	require.Regexp(t, fmt.Sprintf(`^%q;r=0;t=\d+$`, policy), res.Header.Get("RateLimit"))
}

func TestRateLimits(t *testing.T) {
	t.Parallel()
	t.Run("PerApp", func(t *testing.T) {
		t.Parallel()
		tb := setup(t, storetest.MustOpen(t, "sqlite"), limits(100, 3, 5, 100))
		for i := 0; i < 5; i++ {
			res := tb.get(t, "/api/v1/events", tb.testKey)
			require.Equal(t, 200, res.Status)
			require.Equal(t, strconv.Itoa(4-i), res.Header.Get("X-RateLimit-Remaining"))
		}
		requireLimited(t, tb.get(t, "/api/v1/events", tb.testKey), 5, "app-test")
		gql := tb.graphql(t, tb.testKey, `{ events { pageInfo { total } } }`, nil)
		require.Equal(t, 429, gql.Status, "GraphQL shares the app's limit")
		require.Equal(t, "rate_limit_exceeded", gql.gqlErrorExt(t)["code"])
		require.NotEmpty(t, gql.Header.Get("Retry-After"))

		for i := 0; i < 3; i++ {
			require.Equal(t, 200, tb.get(t, "/api/v1/events", tb.liveKey).Status, "the live key has its own limit")
		}
		requireLimited(t, tb.get(t, "/api/v1/events", tb.liveKey), 3, "app-live")
	})
	t.Run("Checkout", func(t *testing.T) {
		t.Parallel()
		tb := setup(t, storetest.MustOpen(t, "sqlite"), limits(100, 100, 100, 2))
		require.Equal(t, 201, tb.checkout(t, tb.testKey, newIdemKey(), tb.highlife(1)).Status)
		res := tb.graphql(t, tb.testKey, checkoutMutation, checkoutVars(tb.highlife(1), newIdemKey()))
		require.Nil(t, res.Body["errors"], "%s", res.Raw)
		limited := tb.checkout(t, tb.testKey, newIdemKey(), tb.highlife(1))
		requireLimited(t, limited, 2, "checkout")
		require.Equal(t, map[string]any{"status_code": 429.0}, limited.Body["meta"])
		res = tb.graphql(t, tb.testKey, checkoutMutation, checkoutVars(tb.highlife(1), newIdemKey()))
		ext := res.gqlErrorExt(t)
		require.Equal(t, "rate_limit_exceeded", ext["code"])
		require.Greater(t, ext["retryAfter"], 0.0)
		require.Equal(t, ext["retryAfter"], mustAtof(t, res.Header.Get("Retry-After")), "the header says what the error says")
		require.Equal(t, 200, tb.get(t, "/api/v1/events", tb.testKey).Status, "reads are not checkout creates")
		require.Equal(t, 201, tb.checkout(t, tb.liveKey, newIdemKey(), tb.highlife(1)).Status, "live has its own checkout limit")
	})
	t.Run("FailedAuth", func(t *testing.T) {
		t.Parallel()
		tb := setup(t, storetest.MustOpen(t, "sqlite"), limits(4, 100, 100, 100))
		forged := func(key, xff string) *response {
			return tb.do(t, http.MethodGet, "/api/v1/events", key, nil, "X-Forwarded-For", xff)
		}
		for i := 0; i < 4; i++ {
			res := forged("svc_test_nope", fmt.Sprintf("198.51.100.%d", i))
			require.Equal(t, 401, res.Status, "a forged X-Forwarded-For changes nothing")
		}
		requireLimited(t, forged("", "198.51.100.99"), 4, "auth")
		requireLimited(t, tb.get(t, "/api/v1/events", tb.testKey), 4, "auth")
		res := tb.graphql(t, tb.testKey, `{ events { pageInfo { total } } }`, nil)
		require.Equal(t, 429, res.Status, "the bucket covers GraphQL too, before any key lookup")
	})
	t.Run("HeldRefusals", func(t *testing.T) {
		// A refusal waits RATE_LIMIT_DELAY before it is answered, so a
		// client retrying in a loop gets one a delay; its answer is the
		// same. Both kinds of refusal: the app's limit and the
		// failed-auth bucket.
		t.Parallel()
		const delay = 300 * time.Millisecond
		tb := setup(t, storetest.MustOpen(t, "sqlite"), limits(1, 100, 2, 100), func(c *Config) { c.RateLimitDelay = delay })
		for range 2 {
			require.Equal(t, 200, tb.get(t, "/api/v1/events", tb.testKey).Status)
		}
		for _, c := range []struct {
			name, key, policy string
			limit             int
		}{{"app", tb.testKey, "app-test", 2}, {"failed auth", "svc_test_nope", "auth", 1}} {
			if c.policy == "auth" {
				require.Equal(t, 401, tb.get(t, "/api/v1/events", c.key).Status)
			}
			start := time.Now()
			res := tb.get(t, "/api/v1/events", c.key)
			took := time.Since(start)
			requireLimited(t, res, c.limit, c.policy)
			require.GreaterOrEqual(t, took, delay, "%s: the refusal was answered after %s", c.name, took)
		}
	})
	t.Run("FailedAuthBehindTrustedProxy", func(t *testing.T) {
		t.Parallel()
		tb := setup(t, storetest.MustOpen(t, "sqlite"), limits(2, 100, 100, 100), func(c *Config) { c.TrustedProxies = "127.0.0.1/32, ::1" })
		for i := 0; i < 2; i++ {
			require.Equal(t, 401, tb.do(t, "GET", "/api/v1/events", "", nil, "X-Forwarded-For", "203.0.113.1").Status)
		}
		require.Equal(t, 429, tb.do(t, "GET", "/api/v1/events", "", nil, "X-Forwarded-For", "203.0.113.1").Status)
		require.Equal(t, 401, tb.do(t, "GET", "/api/v1/events", "", nil, "X-Forwarded-For", "203.0.113.2").Status,
			"behind a trusted proxy each client has its own bucket")
		require.Equal(t, 200, tb.do(t, "GET", "/api/v1/events", tb.testKey, nil, "X-Forwarded-For", "203.0.113.3").Status)
	})
}

func TestHardening(t *testing.T) {
	t.Parallel()
	tb := setup(t, storetest.MustOpen(t, "sqlite"), func(c *Config) { c.MaxBodyBytes = 10_000 })
	t.Run("ErrBodyTooLarge", func(t *testing.T) {
		big := []byte(`{"query": "` + strings.Repeat(" ", 20_000) + `{ events { pageInfo { total } } }"}`)
		res := tb.do(t, http.MethodPost, "/graphql", tb.testKey, big)
		require.Equal(t, 422, res.Status)
		require.Equal(t, "validation_failed", res.gqlErrorExt(t)["code"])
		res = tb.checkout(t, tb.testKey, newIdemKey(), big)
		require.Equal(t, 422, res.Status)
		require.Equal(t, "validation_failed", res.errorCode())
		require.Contains(t, res.details(), "body")
	})
	t.Run("ErrComplexity", func(t *testing.T) {
		var b strings.Builder
		b.WriteString("{")
		for i := 0; i < 3; i++ {
			fmt.Fprintf(&b, " e%d: events(perPage: 100) { nodes { id name dates { id venueName tickets { id name price effectivePrice quantityAvailable currency } } } }", i)
		}
		b.WriteString(" }")
		ext := tb.graphql(t, tb.testKey, b.String(), nil).gqlErrorExt(t)
		require.Equal(t, "validation_failed", ext["code"])
		require.NotContains(t, ext, "status", "refused with 200, as GraphQL over HTTP answers application/json")
		res := tb.graphql(t, tb.testKey, `{ events(perPage: 50) { nodes { id name dates { id venue { name } tickets { id effectivePrice quantityAvailable } } } } }`, nil)
		require.Nil(t, res.Body["errors"], "a dashboard's nested page fits: %s", res.Raw)
	})
	t.Run("AutomaticPersistedQueries", func(t *testing.T) {
		query := `{ events { pageInfo { total } } }`
		sum := sha256.Sum256([]byte(query))
		ext := fmt.Sprintf(`"extensions": {"persistedQuery": {"version": 1, "sha256Hash": %q}}`, hex.EncodeToString(sum[:]))
		res := tb.do(t, http.MethodPost, "/graphql", tb.testKey, []byte(`{`+ext+`}`))
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		require.Equal(t, "PersistedQueryNotFound", res.Body["errors"].([]any)[0].(map[string]any)["message"])
		require.Equal(t, map[string]any{"code": "PERSISTED_QUERY_NOT_FOUND"}, res.gqlErrorExt(t), "Apollo clients match on the code")
		res = tb.do(t, http.MethodPost, "/graphql", tb.testKey, []byte(fmt.Sprintf(`{"query": %q, %s}`, query, ext)))
		require.Nil(t, res.Body["errors"], "%s", res.Raw)
		res = tb.do(t, http.MethodPost, "/graphql", tb.testKey, []byte(`{`+ext+`}`))
		require.Nil(t, res.Body["errors"], "%s", res.Raw)
		require.Equal(t, 7.0, res.Body["data"].(map[string]any)["events"].(map[string]any)["pageInfo"].(map[string]any)["total"])
	})
}

// TestTwoInstances runs two servers on one PostgreSQL database and one Redis,
// with requests alternating between them: they behave as one service.
func TestTwoInstances(t *testing.T) {
	t.Parallel()
	redisURL := os.Getenv("TEST_REDIS_URL")
	if os.Getenv("TEST_DATABASE_URL") == "" || redisURL == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("CI must set TEST_DATABASE_URL and TEST_REDIS_URL")
		}
		t.Skip("needs TEST_DATABASE_URL (PostgreSQL) and TEST_REDIS_URL (Redis)")
	}
	db := storetest.MustOpen(t, "postgres")
	shared := limits(100, 100, 8, 100)
	a := setup(t, db, shared, fastJobs, func(c *Config) { c.RedisURL = redisURL })
	prefix := a.m.Config.RateLimits.Prefix
	cfgB := a.m.Config
	cfgB.RateLimits.Prefix = prefix
	mb, err := New(cfgB, db, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	t.Cleanup(func() { mb.LimitStore().Close() })
	srvB := httptest.NewServer(mb.Handler())
	t.Cleanup(srvB.Close)
	b := &testBundle{m: mb, db: db, srv: srvB, demo: a.demo, testKey: a.testKey, liveKey: a.liveKey}
	both := []*testBundle{a, b}

	t.Run("SharedLimit", func(t *testing.T) {
		for i := 0; i < 8; i++ {
			require.Equal(t, 200, both[i%2].get(t, "/api/v1/events", a.testKey).Status, "request %d", i)
		}
		requireLimited(t, a.get(t, "/api/v1/events", a.testKey), 8, "app-test")
		requireLimited(t, b.get(t, "/api/v1/events", a.testKey), 8, "app-test")
	})
	t.Run("IdempotencyAcrossInstances", func(t *testing.T) {
		key := newIdemKey()
		first := a.checkout(t, a.liveKey, key, a.highlife(1))
		require.Equal(t, 201, first.Status, "%s", first.Raw)
		again := b.checkout(t, a.liveKey, key, a.highlife(1))
		require.Equal(t, 201, again.Status)
		require.Equal(t, "true", again.Header.Get("Idempotent-Replayed"))
		require.Equal(t, first.data()["order_reference"], again.data()["order_reference"])
	})
	t.Run("NoOversellAcrossInstances", func(t *testing.T) {
		id := a.demo.Catalog.Tickets["DEMO-HIGHLIFE-VIP"]
		_, err := db.NewUpdate().Model((*store.Ticket)(nil)).Set("quantity = sold + held + 5").Where("id = ?", id).Exec(context.Background())
		require.NoError(t, err)
		answers := race(24, func(i int) *response {
			return both[i%2].checkout(t, a.liveKey, newIdemKey(), a.cartFor("DEMO-HIGHLIFE", "DEMO-HIGHLIFE-1", "DEMO-HIGHLIFE-VIP", 1))
		})
		created := 0
		for _, r := range answers {
			if r.Status == 201 {
				created++
			} else {
				require.Equal(t, "sold_out", r.errorCode(), "%s", r.Raw)
			}
		}
		require.Equal(t, 5, created)
	})
	t.Run("JobsOnceAcrossInstances", func(t *testing.T) {
		rc := newReceiver(t, ok)
		// An app of its own: the demo app's test bucket is spent above.
		acc, err := a.m.Provision.CreateAccount(context.Background(), provisionAccount("jobs@example.com"))
		require.NoError(t, err)
		in := provisionApp(acc.ID)
		in.RedirectDomains, in.WebhookURL = []string{"partner.example"}, rc.srv.URL
		app, err := a.m.Provision.CreateApp(context.Background(), in)
		require.NoError(t, err)
		key := app.TestKey
		a.startJobs(t)
		b.startJobs(t)
		var refs []string
		for i := 0; i < 6; i++ {
			res := both[i%2].checkout(t, key, newIdemKey(), a.cartFor("DEMO-CHALEWOTE", "DEMO-CHALEWOTE-1", "DEMO-CHALEWOTE-1-GA", 1))
			require.Equal(t, 201, res.Status, "%s", res.Raw)
			refs = append(refs, res.data()["order_reference"].(string))
		}
		pending := a.checkout(t, key, newIdemKey(), a.highlife(1)).data()["order_reference"].(string)
		_, err = db.NewUpdate().Model((*store.Order)(nil)).Set("expires_at = ?", time.Now().UTC().Add(-time.Second)).
			Where("reference = ?", pending).Exec(context.Background())
		require.NoError(t, err)
		refs = append(refs, pending)
		for _, ref := range refs {
			waitFor(t, 20*time.Second, "delivery of "+ref, func() bool {
				var e store.WebhookEvent
				err := db.NewSelect().Model(&e).Where("payload LIKE ?", "%"+ref+"%").Scan(context.Background())
				return err == nil && e.Status == store.WebhookDelivered
			})
		}
		time.Sleep(3 * fastJobsSweep) // more sweeps and polls on both instances
		perEvent := map[string]int{}
		for _, d := range rc.deliveries() {
			perEvent[d.Header.Get("X-SVC-Event-Id")]++
		}
		require.Len(t, perEvent, len(refs))
		for id, n := range perEvent {
			require.Equal(t, 1, n, "event %s delivered once", id)
		}
		n, err := db.NewSelect().Model((*store.WebhookEvent)(nil)).Where("type = 'order.expired'").Count(context.Background())
		require.NoError(t, err)
		require.EqualValues(t, 1, n, "the expiry happened once")
	})
}

// TestGraphQLDocumentLimits: documents made to be slow to parse or
// validate are refused over HTTP before parsing, with document_too_large
// and the status actually sent; an ordinary query still runs.
func TestGraphQLDocumentLimits(t *testing.T) {
	t.Parallel()
	tb := setup(t, storetest.MustOpen(t, "sqlite"), func(c *Config) { c.GraphQLLimits.Fields = 500 })
	rep := func(n int, s string) string { return strings.Repeat(s+" ", n) }
	for name, doc := range map[string]string{
		"RepeatedField":     "{ events { nodes { " + rep(10_000, "id") + "} } }",
		"ManyFragments":     "{ __typename } " + rep(6_000, "fragment F on Query { __typename }"),
		"SpreadOften":       "{ " + rep(3_000, "...F") + "} fragment F on Query { __typename }",
		"AliasList":         "{ " + rep(1_000, "a: __typename") + "}",
		"ConfiguredFields":  "{ events { nodes { " + rep(600, "id") + "} } }",
		"DeepNesting":       strings.Repeat("{ events ", 100) + strings.Repeat("}", 100),
		"PersistedTooLarge": "{ events { nodes { " + rep(10_000, "name") + "} } }",
	} {
		t.Run(name, func(t *testing.T) {
			res := tb.graphql(t, tb.testKey, doc, nil)
			require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s", res.Raw)
			ext := res.gqlErrorExt(t)
			require.Equal(t, "document_too_large", ext["code"])
			require.Equal(t, float64(res.Status), ext["status"])
			require.Less(t, len(res.Raw), 1024, "the answer never echoes the document")
		})
	}
	res := tb.graphql(t, tb.testKey, `{ events(perPage: 2) { nodes { id dates { id } } } }`, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
	require.Nil(t, res.Body["errors"])
}

// stillLimits rebuilds tb's limiters on a clock that stands still in the
// middle of a window, so a test of exact counts never straddles a window
// boundary (where the previous window's weight starts to fade).
func stillLimits(tb *testBundle) {
	clock := &testClock{t: time.Now().UTC().Truncate(time.Hour).Add(30 * time.Second)}
	tb.m.LimitStore().Now = clock.Now
	*tb.m.Limits = *ratelimit.NewLimits(tb.m.LimitStore(), tb.m.Config.RateLimits)
}

func TestFailedAuthBucket(t *testing.T) {
	t.Parallel()
	stores := map[string]func(*Config){"Memory": func(*Config) {}}
	if url := os.Getenv("TEST_REDIS_URL"); url != "" {
		stores["Redis"] = func(c *Config) { c.RedisURL = url }
	} else if os.Getenv("CI") != "" {
		t.Fatal("CI must set TEST_REDIS_URL")
	}
	for name, store := range stores {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tb := setup(t, storetest.MustOpen(t, "sqlite"), limits(60, 100, 100, 100), store)
			stillLimits(tb)
			// 600 requests at once, at most 100 of them on the wire: on a
			// machine of two busy cores, 600 connections at once starve the
			// Redis client's pool (20 connections) past its timeout, and
			// httprate-redis then counts in memory, by design. The limiter's
			// own test races 600 calls with nothing in between.
			tb.srv.Client().Transport.(*http.Transport).MaxConnsPerHost = 100
			answers := race(600, func(int) *response { return tb.get(t, "/api/v1/events", "svc_test_"+rand.Text()) })
			by := map[int]int{}
			for _, r := range answers {
				by[r.Status]++
			}
			require.Equal(t, map[int]int{401: 60, 429: 540}, by, "600 bad keys at once against a limit of 60")
			for _, r := range answers {
				if r.Status == 429 {
					requireLimited(t, r, 60, "auth")
				}
			}
			requireLimited(t, tb.get(t, "/api/v1/events", tb.testKey), 60, "auth")
		})
	}
	t.Run("IPv6ByNetwork", func(t *testing.T) {
		t.Parallel()
		tb := setup(t, storetest.MustOpen(t, "sqlite"), limits(2, 100, 100, 100), func(c *Config) { c.TrustedProxies = "127.0.0.1" })
		from := func(xff, key string) int {
			return tb.do(t, "GET", "/api/v1/events", key, nil, "X-Forwarded-For", xff).Status
		}
		require.Equal(t, 401, from("2001:db8:1:2::1", "svc_test_nope"))
		require.Equal(t, 401, from("2001:db8:1:2:8000::77", "svc_test_nope"))
		require.Equal(t, 429, from("2001:db8:1:2::abcd", tb.testKey), "one /64 is one client")
		require.Equal(t, 200, from("2001:db8:1:3::1", tb.testKey), "the next /64 is another")
	})
	t.Run("ForwardedForWithPort", func(t *testing.T) {
		t.Parallel()
		tb := setup(t, storetest.MustOpen(t, "sqlite"), limits(2, 100, 100, 100), func(c *Config) { c.TrustedProxies = "127.0.0.1" })
		from := func(xff, key string) int {
			return tb.do(t, "GET", "/api/v1/events", key, nil, "X-Forwarded-For", xff).Status
		}
		require.Equal(t, 401, from("198.51.100.8:1234", "svc_test_nope"))
		require.Equal(t, 401, from("198.51.100.8:5678", "svc_test_nope"))
		require.Equal(t, 429, from("198.51.100.8", tb.testKey), "the hop's port is not part of the client")
		require.Equal(t, 401, from("[2001:db8::1]:443", "svc_test_nope"))
		require.Equal(t, 401, from("2001:db8::2", "svc_test_nope"))
		require.Equal(t, 429, from("[2001:db8::3]", tb.testKey), "an IPv6 hop with a port is understood")
		require.Equal(t, 200, from("198.51.100.9:1234", tb.testKey), "and is its own client")
	})
}

func mustAtof(t testing.TB, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	require.NoError(t, err, "%q", s)
	return f
}

// accountApps creates a fresh account with n apps (allowed to redirect to
// the test carts' partner.example) and returns their test and live keys.
func (tb *testBundle) accountApps(t *testing.T, n int) (test, live []string) {
	t.Helper()
	ctx := context.Background()
	acc, err := tb.m.Provision.CreateAccount(ctx, provisionAccount(rand.Text()+"@partner.example"))
	require.NoError(t, err)
	for range n {
		in := provisionApp(acc.ID)
		in.RedirectDomains = []string{"partner.example"}
		app, err := tb.m.Provision.CreateApp(ctx, in)
		require.NoError(t, err)
		test, live = append(test, app.TestKey), append(live, app.LiveKey)
	}
	return test, live
}

// TestAccountLimits: an account's apps together get no more than the
// account's budget (ACCOUNT_LIMIT_MULTIPLE times one app's), however many
// apps it has; other accounts and the account's other environment are not
// touched.
func TestAccountLimits(t *testing.T) {
	t.Parallel()
	stores := map[string]func(*Config){"Memory": func(*Config) {}}
	if url := os.Getenv("TEST_REDIS_URL"); url != "" {
		stores["Redis"] = func(c *Config) { c.RedisURL = url }
	} else if os.Getenv("CI") != "" {
		t.Fatal("CI must set TEST_REDIS_URL")
	}
	for name, store := range stores {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// Per app: 4 test requests and 2 checkouts; per account twice that.
			tb := setup(t, storetest.MustOpen(t, "sqlite"), store, func(c *Config) {
				c.RateLimits = ratelimit.Config{FailedAuth: 100, LiveApp: 100, TestApp: 4, Checkout: 2, AccountMultiple: 2,
					Window: time.Minute, Prefix: "t" + rand.Text()}
			})
			stillLimits(tb)
			for _, tt := range []struct {
				name   string
				budget int
				policy string
				call   func(key string) *response
			}{
				{"Requests", 8, "account-test", func(key string) *response { return tb.get(t, "/api/v1/events", key) }},
				{"Checkouts", 4, "account-checkout", func(key string) *response {
					return tb.checkout(t, key, newIdemKey(), tb.highlife(1))
				}},
			} {
				t.Run(tt.name, func(t *testing.T) {
					keys, live := tb.accountApps(t, 3) // three apps would be three times an app's budget
					ok := 0
					var last *response
					for i := 0; i < 3*tt.budget && last == nil; i++ {
						res := tt.call(keys[i%3])
						switch res.Status {
						case http.StatusOK, http.StatusCreated:
							ok++
						default:
							last = res
						}
					}
					require.Equal(t, tt.budget, ok, "the account's apps together")
					require.NotNil(t, last)
					requireLimited(t, last, tt.budget, tt.policy)
					require.Equal(t, "Too many "+map[string]string{"Requests": "requests", "Checkouts": "checkout sessions"}[tt.name]+
						" for this account's apps together; retry after the time in the Retry-After header.", last.Body["error"].(map[string]any)["message"])
					for _, key := range keys {
						require.Equal(t, 429, tt.call(key).Status, "every app of the account")
					}
					require.Less(t, tt.call(tb.testKey).Status, 300, "another account has its own budget")
					require.Less(t, tt.call(live[0]).Status, 300, "the account's live keys have their own budget")
				})
			}
		})
	}
	t.Run("Sockets", func(t *testing.T) {
		t.Parallel()
		// Per app 2 sockets and 1 subscription; per account twice that.
		tb := liveSetup(t, storetest.MustOpen(t, "sqlite"), func(c *Config) {
			c.Live.MaxConnections, c.Live.MaxSubscriptions, c.Live.AccountMultiple = 2, 1, 2
		})
		date := tb.demo.Catalog.EventDates["DEMO-HIGHLIFE-1"]
		keys, _ := tb.accountApps(t, 3)
		dial := func(key string) (*liveClient, error) {
			return dialLive(t, tb.srv.URL, map[string]any{"X-API-Key": key})
		}
		var socks []*liveClient
		for _, key := range keys {
			c, err := dial(key)
			require.NoError(t, err)
			socks = append(socks, c)
		}
		for i, c := range socks[:2] {
			c.subscribe("a", availabilitySub, map[string]any{"d": date})
			c.next("a")
			require.Equal(t, i+1, tb.m.Live.Stats().Subscriptions)
		}
		socks[2].subscribe("a", availabilitySub, map[string]any{"d": date})
		e := socks[2].refused("a")
		require.Equal(t, "subscription_limit_reached", e["extensions"].(map[string]any)["code"])
		require.Equal(t, "This account's apps already have 2 live subscriptions open on this server; complete one first.", e["message"],
			"the third app's first subscription")

		_, err := dial(keys[0]) // the account's fourth socket
		require.NoError(t, err)
		_, err = dial(keys[1])
		var ce websocket.CloseError
		require.True(t, errors.As(err, &ce), "%v", err)
		require.Equal(t, websocket.StatusCode(4429), ce.Code)
		require.Equal(t, "subscription_limit_reached: This account's apps already have 4 live connections open on this server; close one first.", ce.Reason,
			"the second app's second socket")
		c, err := dial(tb.testKey)
		require.NoError(t, err, "another account")
		c.subscribe("a", availabilitySub, map[string]any{"d": date})
		c.next("a")
	})
}
