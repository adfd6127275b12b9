package readcache

import (
	"context"
	"sync"
)

// DefaultTenantEntries is how many key lookups and apps a Tenants cache
// keeps before it starts over: far more than a deployment has keys, few
// enough (about 200 bytes each) to cost nothing.
const DefaultTenantEntries = 50_000

// Tenants keeps what authentication and checkout read of accounts, apps,
// API keys and scanners, for as long as none of those tables changed
// (store.NewTenantWatch): a key's owner, with the app's and the account's
// status, and an app's redirect allowlist. These change only when an
// operator or a partner acts, so a request normally reads none of them
// from the database. Only rows that were found are kept: an unknown key
// is looked up every time (the failed-authentication limit bounds those),
// so guessing keys cannot fill the cache. A nil *Tenants keeps nothing.
type Tenants struct {
	versions Versions
	max      int

	mu      sync.Mutex
	version uint64
	items   map[any]any
}

// NewTenants returns a cache whose validity follows versions, keeping at
// most max entries.
func NewTenants(versions Versions, max int) *Tenants {
	return &Tenants{versions: versions, max: max}
}

// Get returns the value kept for key, or load's, which it keeps unless the
// tenant tables changed (or could not be told) since before load read
// them: a value read before a change is never kept after it. Errors are
// never kept.
func (t *Tenants) Get(ctx context.Context, key any, load func() (any, error)) (any, error) {
	if t == nil {
		return load()
	}
	version, ok := t.versions.Version(ctx)
	if !ok {
		return load()
	}
	t.mu.Lock()
	if t.items != nil && t.version == version {
		if v, hit := t.items[key]; hit {
			t.mu.Unlock()
			return v, nil
		}
	}
	t.mu.Unlock()
	v, err := load()
	if err != nil {
		return v, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.items == nil || t.version != version || len(t.items) >= t.max {
		if now, ok := t.versions.Version(ctx); !ok || now != version {
			return v, nil
		}
		t.items, t.version = map[any]any{}, version
	}
	t.items[key] = v
	return v, nil
}
