package checkout

import (
	"context"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/store"
)

// ChangesRequest is a read of the changes feed as a client asked for it,
// on either API. Since "" reads from the first change.
type ChangesRequest struct {
	Since string
	Limit *int
}

// ChangesPage is one read of the changes feed.
type ChangesPage struct {
	// Orders changed after Since, in the order of their latest change,
	// each as it is now.
	Orders []*OrderView
	// NextSince is what the client passes as since next time: the place of
	// the last order returned, or the since it sent when none was.
	NextSince string
	// HasMore reports that more changes can be read at once; false means
	// the client has caught up and polls again after a pause.
	HasMore bool
}

// Changes returns the calling app's orders in its key's environment that
// changed after since, in the order of their latest change, each with its
// state now. A change is any write of the order: its status, tickets
// issued, a ticket checked in or voided, the ticket email's state. The
// promise: a client that starts without since and always passes back
// next_since sees every change of every order at least once, whatever
// order concurrent transactions commit in (store.OrderChangesAfter and the
// order sync migration say how). An order changed several times between
// two reads appears once, as it is now. limit is 1 to 100 (default 100);
// since is a next_since this feed handed out.
// Errors: validation_failed, details keyed since and limit.
func (s *Service) Changes(ctx context.Context, c Caller, r ChangesRequest) (*ChangesPage, error) {
	d := apperr.Details{}
	limit := pageLimit(d, "limit", r.Limit, DefaultChangesLimit)
	var after store.ChangeCursor
	if r.Since != "" {
		var ok bool
		if after, ok = decodeChangeToken(r.Since); !ok {
			d.Add("since", "is not a token this feed handed out")
		}
	}
	if err := apperr.Validation(d); err != nil {
		return nil, err
	}
	changes, err := store.OrderChangesAfter(ctx, s.DB, c.AppID, c.Environment, after, limit+1)
	if err != nil {
		return nil, err
	}
	p := &ChangesPage{}
	if len(changes) > limit {
		changes, p.HasMore = changes[:limit], true
	}
	orders := make([]*store.Order, len(changes))
	for i, ch := range changes {
		orders[i] = ch.Order
	}
	if p.Orders, err = s.Views(ctx, s.DB, orders); err != nil {
		return nil, err
	}
	if len(changes) > 0 {
		after = changes[len(changes)-1].Cursor
	}
	p.NextSince = encodeChangeToken(after)
	return p, nil
}
