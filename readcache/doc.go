// Package readcache is every cache of data on the read path, and its
// contract. Besides it, only the catalog's listing index (catalog.Index,
// on PostgreSQL) keeps data between requests: the few facts of every
// visible event its filters and orders read, brought up to date before
// each listing that uses it, under the same watch and the same rules of
// freshness as below. The GraphQL layer (graph) keeps only parsed
// documents and persisted-query texts, which are the client's input, not
// data.
//
// Two kinds of data are kept: the published catalog (Cache, and
// CheckoutCatalog, checkout's view of it), and the tenants (Tenants: what
// authentication read of a key, its app and its account, and an app's
// redirect allowlist), each valid until its own tables change. The rest
// of this comment is about the catalog; Tenants' rules are the same with
// store.NewTenantWatch for the version, plus one: a process that changes a
// tenant through its provision service moves its own version at once
// (store.Watch.Changed), so the change is seen there on the very next
// request, and on other instances when the NOTIFY arrives (TestKeyCache-
// TwoInstances: a few milliseconds). Unknown keys are never kept.
//
// What it may cache: the published catalog (events, dates, venues, ticket
// fields other than stock, event pages and the bytes the REST adapter
// wrote for them) and GraphQL answers whose every field reads the catalog.
// Never orders, checkout sessions, tickets issued to buyers, check-ins or
// anything else that changes by the second: those are read from the
// database on every request. Live stock is never kept as a value; an
// answer that showed stock is kept with the stock it showed and served
// again only while a fresh read of that stock is equal
// (ResponseCache.stockUnchanged), and TestCachedTypes fails when a type
// that is not catalog data becomes reachable from a cached root.
//
// Key: the catalog cache (Cache) is keyed by what the resolver asked for
// (a page's parameters, an event id, a date id, …); the response cache by
// the operation's text, name and variables.
//
// Budget: the catalog cache holds at most DefaultCacheBudget cost units
// (about 512 bytes each, about 25 MB in all) and starts over empty when
// it would exceed them; the response cache charges each answer its bytes,
// key included, in the same units and from the same budget. A GraphQL
// answer is kept only for a query asked before (seenKeys), so ever-new
// texts cost nothing.
//
// Invalidation: a generation of the cache lives while the catalog's
// version is unchanged (store.Watch: a NOTIFY from the process that
// imported, on PostgreSQL; a version row read per request on SQLite) and
// until the next active date ends, which is the only way time changes a
// listing. A value read before a change is never kept after it (Token),
// with one exception that is checked, not assumed: an events page of the
// generation just before may be carried into the new one (CachedValid)
// when the listing index says its total and events are what they were,
// none of those events changed (on PostgreSQL each change names its event
// or venue), and none of their dates ended since. So a change of one event
// leaves the pages it is not on warm. A value that misses is loaded once
// per generation: requests that miss it while it loads wait for that load.
// While the version cannot be told (the listener is reconnecting), nothing
// is served from or kept in the cache.
//
// Staleness bound: on one instance, none: the version is read at the
// start of each request and an import moves it before it returns. Across
// instances on PostgreSQL, the delivery time of a NOTIFY (milliseconds);
// a lost listener reads as "cannot tell" until it is back. Stock shown in
// a cached answer is never older than the request that served it.
//
// Proven by TestCache (this package: versions, date ends, budget),
// TestCachedTypes (what may be cached), and end to end by
// TestCatalogCacheFreshness and TestGraphQLResponseCache in cmd/boxoffice:
// an import by another process and a stock change are visible on the next
// request, through REST and GraphQL, with the cache warm.
package readcache
