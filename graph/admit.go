package graph

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/auth"
)

// bodyTimeout bounds how long a client may take to send a GraphQL body.
const bodyTimeout = 10 * time.Second

// readBody reads the whole request body (already bounded in size by the
// router) within timeout, or the server's ReadTimeout when that is
// shorter, before next runs, so a client trickling its body byte by byte
// never holds an execution slot while it does. Once the body is read the
// read deadline is lifted: a read timing out while the operation runs
// would cancel it.
func readBody(timeout time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		limit := timeout
		if srv, ok := r.Context().Value(http.ServerContextKey).(*http.Server); ok && srv.ReadTimeout > 0 {
			limit = min(limit, srv.ReadTimeout)
		}
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(time.Now().Add(limit)) // not every writer supports it (tests)
		b, err := io.ReadAll(r.Body)
		if err != nil {
			// The deadline stays: net/http reads what is left of the body
			// after the answer, and a client that stalled would otherwise
			// hold the connection for ever.
			var maxErr *http.MaxBytesError
			msg := "could not be read in time"
			if errors.As(err, &maxErr) {
				msg = "must be at most " + strconv.FormatInt(maxErr.Limit, 10) + " bytes"
			}
			WriteError(w, r, apperr.Validation(apperr.Details{"body": {msg}}))
			return
		}
		_ = rc.SetReadDeadline(time.Time{})
		r.Body = io.NopCloser(bytes.NewReader(b))
		next.ServeHTTP(w, r)
	})
}

// admit runs at most slots GraphQL operations at once, and at most share
// of them for any one tenant, so one tenant's burst or slow queries never
// take every slot. An app's share is its account's, all its apps and
// both environments together (each app is bounded by it too): more apps or
// keys do not buy more slots. A scanner key, which belongs to no account,
// is a tenant of its own (slotTenant). A request first waits for its account's
// share, then for a slot; a client that leaves while waiting never runs.
// An operation runs in one goroutine (graph/sequential) and allocates
// about 1 MB for a 50-event nested answer; the slots bound that memory
// and keep a burst queued rather than interleaved, while leaving enough
// operations in flight to cover their database round trips.
func admit(slots, share int, next http.Handler) http.Handler {
	global := make(chan struct{}, slots)
	var mu sync.Mutex
	type tenant struct {
		sem   chan struct{}
		users int
	}
	tenants := map[string]*tenant{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := ""
		if p, err := auth.FromContext(r.Context()); err == nil {
			key = slotTenant(p)
		}
		mu.Lock()
		t := tenants[key]
		if t == nil {
			t = &tenant{sem: make(chan struct{}, share)}
			tenants[key] = t
		}
		t.users++
		mu.Unlock()
		defer func() {
			mu.Lock()
			if t.users--; t.users == 0 {
				delete(tenants, key)
			}
			mu.Unlock()
		}()

		select {
		case t.sem <- struct{}{}:
		case <-r.Context().Done():
			return
		}
		defer func() { <-t.sem }()
		select {
		case global <- struct{}{}:
		case <-r.Context().Done():
			return
		}
		defer func() { <-global }()
		next.ServeHTTP(w, r)
	})
}

// slotTenant is whose share of the slots a caller's operations take: its
// account's, or for a door device its scanner key's own, so one scanner's
// burst never waits on another's. The prefixes keep the two apart.
func slotTenant(p *auth.Principal) string {
	if p.Scanner() {
		return "scanner:" + strconv.FormatInt(p.KeyID, 10)
	}
	return "account:" + strconv.FormatInt(p.AccountID, 10)
}
