package readcache

import (
	"context"

	"github.com/boxoffice/boxoffice/store"
)

// CheckoutCatalog is checkout's view of the catalog (checkout.Catalog)
// through the request's catalog cache (For): a checkout create of a
// ticket some request read before reads no catalog row. Tickets are kept
// without their stock (Sold and Held are zero in what it returns), which
// is never cached.
type CheckoutCatalog struct{ DB *store.DB }

// Keys of what CheckoutCatalog keeps, apart from the resolvers' keys.
type (
	checkoutEventKey  int64
	checkoutDateKey   struct{ id, event int64 }
	checkoutTicketKey int64
)

// VisibleEvent implements checkout.Catalog. Errors: store.ErrNotFound.
func (c CheckoutCatalog) VisibleEvent(ctx context.Context, id int64) (*store.Event, error) {
	return Cached(ctx, For(ctx), checkoutEventKey(id), one, func() (*store.Event, error) {
		return store.VisibleEvent(ctx, c.DB, id)
	})
}

// EventDateOfEvent implements checkout.Catalog. Errors: store.ErrNotFound.
func (c CheckoutCatalog) EventDateOfEvent(ctx context.Context, id, eventID int64) (*store.EventDate, error) {
	return Cached(ctx, For(ctx), checkoutDateKey{id, eventID}, one, func() (*store.EventDate, error) {
		return store.EventDateOfEvent(ctx, c.DB, id, eventID)
	})
}

// TicketsByIDs implements checkout.Catalog: the tickets found, in one
// statement for those not kept, without stock.
func (c CheckoutCatalog) TicketsByIDs(ctx context.Context, ids []int64) ([]store.Ticket, error) {
	snap := For(ctx)
	out := make([]store.Ticket, 0, len(ids))
	var missing []int64
	for _, id := range ids {
		if v, hit := snap.Get(ctx, checkoutTicketKey(id)); hit {
			out = append(out, *v.(*store.Ticket))
		} else {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	ts, err := store.TicketsByIDs(ctx, c.DB, missing)
	if err != nil {
		return nil, err
	}
	for i := range ts {
		t := ts[i]
		t.Sold, t.Held = 0, 0
		snap.Put(ctx, checkoutTicketKey(t.ID), &t, 1)
		out = append(out, t)
	}
	return out, nil
}

func one[V any](V) int { return 1 }
