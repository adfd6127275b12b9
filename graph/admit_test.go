package graph

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/auth"
	"github.com/boxoffice/boxoffice/testwait"
	"github.com/stretchr/testify/require"
)

// TestAdmit: no more than n requests run at once; the rest wait their
// turn, and one whose client leaves while waiting never runs.
func TestAdmit(t *testing.T) {
	var running, most, ran atomic.Int32
	release := make(chan struct{})
	h := admit(2, 2, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := running.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		<-release
		running.Add(-1)
		ran.Add(1)
	}))
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() { h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/graphql", nil)) })
	}
	testwait.For(t, 5*time.Second, "two requests running", func() bool { return running.Load() == 2 })

	ctx, cancel := context.WithCancel(context.Background())
	gone := make(chan struct{})
	go func() {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/graphql", nil).WithContext(ctx))
		close(gone)
	}()
	cancel()
	<-gone

	close(release)
	wg.Wait()
	require.Equal(t, int32(2), most.Load())
	require.Equal(t, int32(6), ran.Load(), "the client that left never ran")
}

func asApp(r *http.Request, account, app int64, env string) *http.Request {
	return r.WithContext(auth.WithPrincipal(r.Context(), &auth.Principal{AccountID: account, AppID: app, Environment: env}))
}

// TestAdmit_Share: an account that holds its share of the slots waits for
// its own requests to finish, while another account's request runs at
// once; the share is the account's, whichever of its apps and keys ask.
func TestAdmit_Share(t *testing.T) {
	type caller struct {
		app int64
		env string
	}
	for _, tt := range []struct {
		name string
		from [3]caller // account 1's three requests; its share is two
	}{
		{"OneApp", [3]caller{{1, "test"}, {1, "test"}, {1, "test"}}},
		{"AppsOfOneAccount", [3]caller{{1, "test"}, {2, "test"}, {3, "live"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			release := make(chan struct{})
			var running sync.Map
			h := admit(4, 2, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				running.Store(r.URL.Query().Get("id"), true)
				if r.URL.Query().Get("block") != "" {
					<-release
				}
			}))
			var wg sync.WaitGroup
			for i, c := range tt.from {
				wg.Go(func() {
					h.ServeHTTP(httptest.NewRecorder(), asApp(httptest.NewRequest(http.MethodPost, fmt.Sprintf("/graphql?block=1&id=a%d", i), nil), 1, c.app, c.env))
				})
			}
			testwait.For(t, 5*time.Second, "two requests running", func() bool {
				n := 0
				running.Range(func(any, any) bool { n++; return true })
				return n == 2
			})

			// Account 2 runs although account 1 has a request waiting and slots remain.
			h.ServeHTTP(httptest.NewRecorder(), asApp(httptest.NewRequest(http.MethodPost, "/graphql?id=b", nil), 2, 9, "test"))
			_, ran := running.Load("b")
			require.True(t, ran)
			n := 0
			running.Range(func(k, _ any) bool {
				if k.(string)[0] == 'a' {
					n++
				}
				return true
			})
			require.Equal(t, 2, n, "account 1's third request still waits for its share")
			close(release)
			wg.Wait()
		})
	}
}

func asScanner(r *http.Request, id int64) *http.Request {
	return r.WithContext(auth.WithPrincipal(r.Context(), &auth.Principal{Kind: auth.KindScanner, KeyID: id, Environment: "live", EventID: 3}))
}

// TestAdmit_ScannerShare: each scanner key has a share of its own (it
// belongs to no account): one that holds its share keeps no other scanner
// waiting, nor the app of an account whose id is the scanner's.
func TestAdmit_ScannerShare(t *testing.T) {
	release := make(chan struct{})
	var running sync.Map
	h := admit(6, 2, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		running.Store(r.URL.Query().Get("id"), true)
		if r.URL.Query().Get("block") != "" {
			<-release
		}
	}))
	ran := func(id string) bool { _, ok := running.Load(id); return ok }
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Go(func() {
			h.ServeHTTP(httptest.NewRecorder(), asScanner(httptest.NewRequest(http.MethodPost, fmt.Sprintf("/graphql?block=1&id=s%d", i), nil), 5))
		})
	}
	testwait.For(t, 5*time.Second, "two of the scanner's three requests running", func() bool { return ran("s0") && ran("s1") || ran("s0") && ran("s2") || ran("s1") && ran("s2") })

	defer wg.Wait()
	defer close(release)
	wg.Go(func() {
		h.ServeHTTP(httptest.NewRecorder(), asScanner(httptest.NewRequest(http.MethodPost, "/graphql?id=other", nil), 6))
	})
	wg.Go(func() {
		h.ServeHTTP(httptest.NewRecorder(), asApp(httptest.NewRequest(http.MethodPost, "/graphql?id=app", nil), 5, 5, "live"))
	})
	testwait.For(t, 5*time.Second, "another scanner runs at once", func() bool { return ran("other") })
	testwait.For(t, 5*time.Second, "so does account 5's app", func() bool { return ran("app") })
	n := 0
	for _, id := range []string{"s0", "s1", "s2"} {
		if ran(id) {
			n++
		}
	}
	require.Equal(t, 2, n, "scanner 5's third request still waits for its share")
}

// TestReadBody_SlowBodyHoldsNoSlot: a body trickling in is read before a
// slot is taken, so with a single slot another request still runs; a body
// that does not arrive in time is refused without running anything.
func TestReadBody_SlowBodyHoldsNoSlot(t *testing.T) {
	var ran atomic.Int32
	h := readBody(time.Hour, admit(1, 1, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		ran.Add(1)
		_, _ = w.Write(b)
	})))
	srv := httptest.NewServer(h)
	defer srv.Close()

	pr, pw := io.Pipe()
	slowDone := make(chan string)
	go func() {
		res, err := http.Post(srv.URL, "application/json", pr)
		if err != nil {
			slowDone <- err.Error()
			return
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		slowDone <- string(b)
	}()
	_, err := pw.Write([]byte(`{"query":`)) // and nothing more for now
	require.NoError(t, err)

	res, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"query":"{ a }"}`))
	require.NoError(t, err)
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	require.Equal(t, `{"query":"{ a }"}`, string(b), "the only slot was free for a whole request")
	require.Equal(t, int32(1), ran.Load())

	_, _ = pw.Write([]byte(`"{ b }"}`))
	require.NoError(t, pw.Close())
	require.Equal(t, `{"query":"{ b }"}`, <-slowDone)

	// A body that stops arriving is cut off at the deadline, answered 422.
	h2 := httptest.NewServer(readBody(50*time.Millisecond, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		t.Error("ran with a body that never came")
	})))
	defer h2.Close()
	pr2, pw2 := io.Pipe()
	defer pw2.Close()
	go func() { _, _ = pw2.Write([]byte(`{"q`)) }()
	res, err = http.Post(h2.URL, "application/json", pr2)
	if err == nil { // the server may also close the connection first
		b, _ = io.ReadAll(res.Body)
		res.Body.Close()
		require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode, "%s", b)
		require.Contains(t, string(b), "could not be read in time")
	}
}
