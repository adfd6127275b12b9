package checkout_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/checkout/checkouttest"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"
)

// TestChangesNeverMissAChange is the feed's promise under load: writers
// change orders in transactions that commit out of order on purpose
// (each takes its transaction id, holds the transaction open a random few
// milliseconds, writes, holds it again, commits), new orders arrive, and a
// poller follows next_since with small pages all the while. Once the
// writers stop, the poller's last-seen state of every order must become
// each order's final state; a change it stepped over would never come
// back, and the poll times out.
func TestChangesNeverMissAChange(t *testing.T) {
	t.Parallel()
	for _, kind := range storetest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			url := storetest.MigratedURL(t, kind)
			// The poller reads through a connection pool of its own, as
			// another server instance would, so writers holding every
			// connection of theirs never starve it.
			db, readerDB := storetest.OpenURL(t, url), storetest.OpenURL(t, url)
			feedChanges(t, db, readerDB)
		})
	}
}

func feedChanges(t *testing.T, db, readerDB *store.DB) {
	const (
		writers   = 20
		rounds    = 25
		preloaded = 30
	)
	ctx := context.Background()
	svc := checkouttest.MustNew(t, db).Service
	reader := &checkout.Service{DB: readerDB, Now: svc.Now, Config: svc.Config}
	cat := storetest.MustCatalog(t, db, nil)
	app := storetest.MustApp(t, db)
	caller := checkout.Caller{AppID: app.ID, Environment: store.EnvLive}
	// Another app's orders change too; the feed never shows them.
	other := storetest.MustApp(t, db)

	var (
		mu  sync.Mutex
		ids []int64 // the app's orders, growing
	)
	for i := range preloaded {
		ids = append(ids, storetest.MustOrder(t, db, app, cat, fmt.Sprintf("ord_feed_%d_%s", i, cat.Event.Slug)).ID)
	}
	otherID := storetest.MustOrder(t, db, other, cat, "ord_feed_other_"+cat.Event.Slug).ID

	write := func(w, r int, rng *rand.Rand) error {
		mu.Lock()
		targets := []int64{ids[rng.IntN(len(ids))], ids[rng.IntN(len(ids))]}
		mu.Unlock()
		if targets[0] > targets[1] { // one lock order: no deadlocks
			targets[0], targets[1] = targets[1], targets[0]
		}
		pause := func() { time.Sleep(time.Duration(rng.IntN(4000)) * time.Microsecond) }
		var created int64
		err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			if db.Postgres() && rng.IntN(2) == 0 {
				// Take the transaction id now: younger transactions
				// will write and commit before this one does.
				if _, err := tx.ExecContext(ctx, "SELECT pg_current_xact_id()"); err != nil {
					return err
				}
			}
			pause()
			version := fmt.Sprintf(`{"v": "w%d-r%d"}`, w, r)
			switch rng.IntN(10) {
			case 0: // a new order
				o := &store.Order{
					Reference: fmt.Sprintf("ord_feed_w%d_r%d_%s", w, r, cat.Event.Slug), AppID: app.ID, Environment: store.EnvLive,
					Status: store.OrderPending, EventID: cat.Event.ID, EventDateID: cat.Date.ID, Currency: "GHS",
					TotalAmount: 100, RequiresPayment: true, CustomerName: "Ama", CustomerEmail: "ama@example.com",
					CustomerPhone: "+233241234567", SuccessURL: "https://shop.example/ok", CancelURL: "https://shop.example/no",
					Metadata: map[string]any{"v": fmt.Sprintf("w%d-r%d", w, r)}, TicketsEmailStatus: store.TicketsEmailNotSent,
					CreatedAt: time.Now().UTC(), UpdatedAt: time.Now().UTC(),
				}
				if err := store.InsertOrder(ctx, tx, o, nil); err != nil {
					return err
				}
				created = o.ID
			case 1: // the ticket email's state
				if err := store.SetTicketsEmail(ctx, tx, targets[0], store.TicketsEmailSent, time.Now().UTC()); err != nil {
					return err
				}
				fallthrough
			default: // the door, the sweep, settlement…: any write of the row
				for _, id := range targets {
					if _, err := tx.NewUpdate().Model((*store.Order)(nil)).Set("metadata = ?", version).
						Set("updated_at = ?", time.Now().UTC()).Where("id = ?", id).Exec(ctx); err != nil {
						return err
					}
				}
				if rng.IntN(5) == 0 {
					if _, err := tx.NewUpdate().Model((*store.Order)(nil)).Set("metadata = ?", version).
						Where("id = ?", otherID).Exec(ctx); err != nil {
						return err
					}
				}
			}
			pause()
			return nil
		})
		if err == nil && created != 0 {
			mu.Lock()
			ids = append(ids, created)
			mu.Unlock()
		}
		return err
	}

	var (
		wg   sync.WaitGroup
		done atomic.Bool
		errs = make(chan error, writers)
	)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			for r := range rounds {
				if err := write(w, r, rng); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); done.Store(true) }()

	// The poller: what it last saw of each order.
	seen := map[string]any{}
	since, polls := "", 0
	poll := func() {
		t.Helper()
		limit := 1 + rand.IntN(10)
		p, err := reader.Changes(ctx, caller, checkout.ChangesRequest{Since: since, Limit: &limit})
		require.NoError(t, err)
		require.LessOrEqual(t, len(p.Orders), limit)
		for _, o := range p.Orders {
			require.Equal(t, store.EnvLive, o.Environment)
			seen[o.Reference] = o.Metadata["v"]
		}
		require.NotEmpty(t, p.NextSince)
		since = p.NextSince
		polls++
		if !p.HasMore {
			time.Sleep(time.Millisecond)
		}
	}
	for !done.Load() {
		poll()
	}
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}

	final := map[string]any{}
	var rows []store.Order
	require.NoError(t, db.NewSelect().Model(&rows).Where("app_id = ?", app.ID).Scan(ctx))
	for _, o := range rows {
		final[o.Reference] = o.Metadata["v"]
	}
	require.Len(t, final, len(ids))
	deadline := time.Now().Add(60 * time.Second)
	for !maps.Equal(seen, final) {
		if time.Now().After(deadline) {
			missed := map[string]string{}
			for ref, v := range final {
				if seen[ref] != v {
					missed[ref] = fmt.Sprintf("saw %v, final %v", seen[ref], v)
				}
			}
			require.Empty(t, missed, "changes the poller never saw, after %d polls", polls)
		}
		poll()
	}
	t.Logf("%d orders, %d writes, %d polls", len(final), writers*rounds, polls)
}

// TestChanges: the feed's paging and its refusals.
func TestChanges(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		svc := checkouttest.MustNew(t, db).Service
		cat := storetest.MustCatalog(t, db, nil)
		app := storetest.MustApp(t, db)
		caller := checkout.Caller{AppID: app.ID, Environment: store.EnvLive}
		var refs []string
		for i := range 5 {
			refs = append(refs, storetest.MustOrder(t, db, app, cat, fmt.Sprintf("ord_changes_%d_%s", i, cat.Event.Slug)).Reference)
		}
		storetest.ChangesSettled(t, db)
		read := func(since string, limit int) *checkout.ChangesPage {
			t.Helper()
			p, err := svc.Changes(ctx, caller, checkout.ChangesRequest{Since: since, Limit: &limit})
			require.NoError(t, err)
			return p
		}
		refsOf := func(p *checkout.ChangesPage) []string {
			out := []string{}
			for _, o := range p.Orders {
				out = append(out, o.Reference)
			}
			return out
		}

		p := read("", 3)
		require.Equal(t, refs[:3], refsOf(p))
		require.True(t, p.HasMore)
		p = read(p.NextSince, 3)
		require.Equal(t, refs[3:], refsOf(p))
		require.False(t, p.HasMore)
		end := p.NextSince
		p = read(end, 3)
		require.Empty(t, p.Orders)
		require.Equal(t, end, p.NextSince, "nothing new: the same place")

		// The first order changes: it comes again, as it is now.
		require.NoError(t, store.SetTicketsEmail(ctx, db, mustOrderID(t, db, refs[0]), store.TicketsEmailSent, time.Now().UTC()))
		storetest.ChangesSettled(t, db)
		p = read(end, 3)
		require.Equal(t, refs[:1], refsOf(p))
		require.Equal(t, "sent", p.Orders[0].TicketsEmail.Status)

		def, err := svc.Changes(ctx, caller, checkout.ChangesRequest{})
		require.NoError(t, err)
		require.Len(t, def.Orders, 5, "default limit 100")
		empty, err := svc.Changes(ctx, checkout.Caller{AppID: app.ID, Environment: store.EnvTest}, checkout.ChangesRequest{})
		require.NoError(t, err)
		require.Empty(t, empty.Orders, "test and live never mix")

		tampered := []byte(end)
		tampered[3] ^= 1
		for name, req := range map[string]checkout.ChangesRequest{
			"limit 0":   {Limit: ptr(0)},
			"limit 101": {Limit: ptr(101)},
			"garbage":   {Since: "not a token"},
			"tampered":  {Since: string(tampered)},
			"cursor":    {Since: firstCursor(t, svc, caller)},
		} {
			_, err := svc.Changes(ctx, caller, req)
			require.Equal(t, apperr.ValidationFailed, apperr.CodeOf(err), name)
			d := apperr.From(err).Details
			if req.Limit != nil {
				require.Equal(t, apperr.Details{"limit": {"must be between 1 and 100"}}, d, name)
			} else {
				require.Equal(t, apperr.Details{"since": {"is not a token this feed handed out"}}, d, name)
			}
		}
	})
}

// firstCursor is the cursor of the first order of the caller's list: a
// token of another kind than the feed's.
func firstCursor(t *testing.T, svc *checkout.Service, c checkout.Caller) string {
	t.Helper()
	p, err := svc.Orders(context.Background(), c, checkout.OrdersRequest{})
	require.NoError(t, err)
	require.NotEmpty(t, p.Cursors)
	return p.Cursors[0]
}

func mustOrderID(t *testing.T, db *store.DB, ref string) int64 {
	t.Helper()
	o, err := store.OrderByReference(context.Background(), db, ref)
	require.NoError(t, err)
	return o.ID
}
