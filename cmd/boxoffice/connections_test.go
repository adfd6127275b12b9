package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/seed"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/boxoffice/boxoffice/testwait"
	"github.com/stretchr/testify/require"
)

// TestStalledBodiesAreCut: a client that announces a body and then stalls,
// or trickles it a byte at a time, is cut by the server at its read
// timeout, on every route: GraphQL, REST with and without a key, the
// portal, the WebSocket upgrade and the event stream. Nothing outlives its
// deadline, whatever the handler did with the read deadline. What it
// answers, if anything, is 408.
func TestStalledBodiesAreCut(t *testing.T) {
	t.Parallel()
	tb := setup(t, storetest.MustOpen(t, "sqlite"))
	const readTimeout = 300 * time.Millisecond
	srv := tb.m.HTTPServer(tb.m.Handler())
	srv.ReadTimeout, srv.ReadHeaderTimeout = readTimeout, readTimeout
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	wg.Go(func() { _ = srv.Serve(ln) })
	t.Cleanup(func() { srv.Close(); wg.Wait() })

	// reads: the route reads the body before it can answer anything.
	routes := []struct {
		name, method, path, key, extra string
		reads                          bool
	}{
		{"GraphQL", "POST", "/graphql", tb.testKey, "Content-Type: application/json\r\n", true},
		{"GraphQLNoKey", "POST", "/graphql", "", "Content-Type: application/json\r\n", false},
		{"REST", "POST", "/api/v1/checkout-sessions", tb.testKey, "Content-Type: application/json\r\nIdempotency-Key: stall-1\r\n", true},
		{"RESTNoKey", "POST", "/api/v1/checkout-sessions", "", "Content-Type: application/json\r\n", false},
		{"Portal", "POST", "/portal/signin", "", "Content-Type: application/x-www-form-urlencoded\r\n", true},
		{"WebSocketUpgrade", "GET", "/graphql", "", "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: graphql-transport-ws\r\n", false},
		{"EventStream", "GET", "/api/v1/webhook-events/stream", tb.testKey, "", false},
	}
	for _, rt := range routes {
		for _, trickle := range []bool{false, true} {
			name := rt.name + "/Stalled"
			if trickle {
				name = rt.name + "/Trickle"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				conn, err := net.Dial("tcp", ln.Addr().String())
				require.NoError(t, err)
				defer conn.Close()
				head := rt.method + " " + rt.path + " HTTP/1.1\r\nHost: boxoffice.test\r\nContent-Length: 200000\r\n" + rt.extra
				if rt.key != "" {
					head += "X-API-Key: " + rt.key + "\r\n"
				}
				_, err = io.WriteString(conn, head+"\r\n{\"query\":")
				require.NoError(t, err)
				closed := make(chan struct{})
				var answer strings.Builder
				go func() {
					// Whatever the server answers, it must then close.
					_, _ = io.Copy(&answer, conn)
					close(closed)
				}()
				deadline := testwait.After(t, 10*time.Second)
				tick := time.NewTicker(50 * time.Millisecond)
				defer tick.Stop()
				for {
					select {
					case <-closed:
						// 408 or a closed connection: never 499, a status
						// for the logs, nor an answer to half a body.
						if status, _, _ := strings.Cut(answer.String(), "\r\n"); status != "" {
							if rt.reads {
								require.Equal(t, "HTTP/1.1 408 Request Timeout", status, "%s %s", rt.method, rt.path)
							} else {
								// Refused before the body is read (no key, a
								// body declared too large): a 4xx of its own.
								require.Regexp(t, `^HTTP/1\.1 4\d\d `, status, "%s %s", rt.method, rt.path)
								require.NotContains(t, status, " 499 ", "%s %s", rt.method, rt.path)
							}
						}
						return
					case <-deadline:
						t.Fatalf("%s %s: the connection is still open minutes after a read timeout of %s", rt.method, rt.path, readTimeout)
					case <-tick.C:
						if trickle {
							_, _ = conn.Write([]byte(" "))
						}
					}
				}
			})
		}
	}
}

// TestClientThatLeaves: a client that gives up while its request waits on
// the database is logged and counted as 499, never as a 500 and never with
// a panic or an error line, on REST and GraphQL. The wait is real: another
// session holds a lock on the events table (PostgreSQL, where a lock can
// be held against readers).
func TestClientThatLeaves(t *testing.T) {
	t.Parallel()
	for _, kind := range storetest.Kinds() {
		if kind != "postgres" {
			continue // SQLite readers never wait on a writer (WAL)
		}
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			db := storetest.MustOpen(t, kind)
			logs := &syncBuffer{}
			m, err := New(DefaultConfig(), db, slog.New(slog.NewJSONHandler(logs, nil)))
			require.NoError(t, err)
			t.Cleanup(m.Listener.Close)
			t.Cleanup(m.Live.Close)
			require.NoError(t, m.Migrate(context.Background()))
			demo, err := seed.Demo(context.Background(), db, m.Provision, m.Now())
			require.NoError(t, err)
			srv := httptest.NewServer(m.Handler())
			t.Cleanup(srv.Close)
			admin := httptest.NewServer(m.AdminHandler())
			t.Cleanup(admin.Close)

			ctx := context.Background()
			tx, err := db.BeginTx(ctx, nil)
			require.NoError(t, err)
			// Before the server's cleanup, which waits for every request.
			t.Cleanup(func() { _ = tx.Rollback() })
			_, err = tx.ExecContext(ctx, "LOCK TABLE events IN ACCESS EXCLUSIVE MODE")
			require.NoError(t, err)

			requests := []func(ctx context.Context) (*http.Request, error){
				func(ctx context.Context) (*http.Request, error) {
					return http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/api/v1/events?per_page=7", nil)
				},
				func(ctx context.Context) (*http.Request, error) {
					r, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/graphql",
						strings.NewReader(`{"query":"{ events(perPage: 9) { nodes { id name } } }"}`))
					if r != nil {
						r.Header.Set("Content-Type", "application/json")
					}
					return r, err
				},
			}
			for _, mk := range requests {
				for range 3 {
					cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
					req, err := mk(cctx)
					require.NoError(t, err)
					req.Header.Set("X-API-Key", demo.App.TestKey)
					res, err := http.DefaultClient.Do(req)
					cancel()
					if err == nil {
						res.Body.Close()
						t.Fatalf("%s answered %d while the table was locked", req.URL.Path, res.StatusCode)
					}
				}
			}
			// Every abandoned request has ended on the server before the
			// lock goes: each logs its line when it returns.
			waitFor(t, 10*time.Second, "six requests logged as 499", func() bool { return strings.Count(logs.String(), `"status":499`) == 6 })
			require.NoError(t, tx.Rollback())

			sc := bufio.NewScanner(strings.NewReader(logs.String()))
			for sc.Scan() {
				var line map[string]any
				require.NoError(t, json.Unmarshal(sc.Bytes(), &line))
				require.NotEqual(t, "ERROR", line["level"], "a client leaving is no error: %s", sc.Text())
				require.NotContains(t, sc.Text(), "panic")
			}
			metrics := scrape(t, admin.URL)
			for _, route := range []string{"/api/v1/events", "/graphql"} {
				require.Contains(t, metrics, fmt.Sprintf(`boxoffice_http_requests_total{method="%s",route="%s",status="499"} 3`,
					map[string]string{"/api/v1/events": "GET", "/graphql": "POST"}[route], route))
			}
			require.NotContains(t, metrics, `status="500"`)
		})
	}
}
