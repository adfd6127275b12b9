package checkin_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/checkin"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/boxoffice/boxoffice/tickets"
	"github.com/stretchr/testify/require"
)

// TestIdempotency: a scan retried under its Idempotency-Key gets its own
// answer back, not already_checked_in, and records nothing more; the key
// with another scan is idempotency_conflict; keys are each scanner's own.
func TestIdempotency(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		b := setup(t, db)
		ctx := context.Background()
		door, other := b.scanner(t, "DEMO-CHALEWOTE", store.EnvTest), b.scanner(t, "DEMO-CHALEWOTE", store.EnvTest)
		code := b.gaCode(t, store.EnvTest)
		req := checkin.Request{Key: "scan-1", Input: b.input(t, code, "DEMO-CHALEWOTE-1", gate("North"))}

		first, replayed, err := b.svc.CheckIn(ctx, door, req)
		require.NoError(t, err)
		require.False(t, replayed)
		require.True(t, first.Admitted())

		// The same scan spelled differently (direction written out, the
		// code in lower case) is the same scan.
		retry := checkin.Request{Key: "scan-1", Input: b.input(t, "  "+code+" ", "DEMO-CHALEWOTE-1", gate("North"),
			func(in *checkin.Input) { in.Direction = ptr(store.CheckInEntry) })}
		again, replayed, err := b.svc.CheckIn(ctx, door, retry)
		require.NoError(t, err)
		require.True(t, replayed)
		require.Equal(t, first, again, "the saved answer, not already_checked_in")

		_, _, err = b.svc.CheckIn(ctx, door, checkin.Request{Key: "scan-1", Input: b.input(t, code, "DEMO-CHALEWOTE-1", gate("South"))})
		e := apperr.From(err)
		require.Equal(t, apperr.IdempotencyConflict, e.Code)
		require.Equal(t, "This Idempotency-Key was already used with a different scan.", e.Message)

		v, replayed, err := b.svc.CheckIn(ctx, other, req)
		require.NoError(t, err)
		require.False(t, replayed, "another scanner's key of the same name is its own")
		require.Equal(t, checkin.AlreadyCheckedIn, *v.Reason)

		types, _ := b.events(t, first.Ticket.OrderReference, 2)
		require.Equal(t, []string{"ticket.checked_in"}, types, "a replay emits nothing")
		n, err := db.NewSelect().Model((*store.CheckIn)(nil)).Count(ctx)
		require.NoError(t, err)
		require.EqualValues(t, 2, n)
	})
}

// TestExactlyOnce: many concurrent entry scans of one code, some under the
// same Idempotency-Key, admit it once; every other answer is
// already_checked_in naming that admission, or the admission itself for
// a retry of its key.
func TestExactlyOnce(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		b := setup(t, db)
		doors := []checkin.Scanner{b.scanner(t, "DEMO-CHALEWOTE", store.EnvTest), b.scanner(t, "DEMO-CHALEWOTE", store.EnvTest)}
		code := b.gaCode(t, store.EnvTest)
		const n = 40
		views := make([]*checkin.View, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				key := ""
				if i%4 == 0 {
					key = "same-key" // ten scans of door 0 under one key
				}
				v, _, err := b.svc.CheckIn(context.Background(), doors[i%2], checkin.Request{Key: key,
					Input: b.input(t, code, "DEMO-CHALEWOTE-1", gate(string(rune('A'+i%2))))})
				if err != nil {
					t.Errorf("scan %d: %v", i, err)
					return
				}
				views[i] = v
			})
		}
		wg.Wait()
		var admitted []*checkin.View
		for _, v := range views {
			if v != nil && v.Admitted() {
				admitted = append(admitted, v)
			}
		}
		require.NotEmpty(t, admitted)
		winner := admitted[0]
		keyed := views[0]
		for i, v := range views {
			require.NotNil(t, v)
			switch {
			case v.ID == winner.ID:
			case i%4 == 0:
				require.Equal(t, keyed, v, "scans under one key answer alike")
			default:
				require.Equal(t, checkin.AlreadyCheckedIn, *v.Reason, "scan %d", i)
				require.Equal(t, &checkin.Previous{ScannedAt: winner.ScannedAt, Gate: winner.Gate}, v.Previous)
			}
		}
		for _, v := range admitted {
			require.Equal(t, winner.ID, v.ID, "one admission, however many saw it")
		}
		rows, err := db.NewSelect().Model((*store.CheckIn)(nil)).Where("result = ?", store.CheckInAdmitted).Count(context.Background())
		require.NoError(t, err)
		require.EqualValues(t, 1, rows)
		types, _ := b.events(t, winner.Ticket.OrderReference, 2)
		require.Equal(t, []string{"ticket.checked_in"}, types)
	})
}

// TestVoid: voiding a ticket, or an order's tickets, emits ticket.voided
// once per ticket with the order's next sequence; the door refuses it
// (void), a ticket inside stays recorded inside, and the counts leave
// void tickets out.
func TestVoid(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		b := setup(t, db)
		ctx := context.Background()
		door := b.scanner(t, "DEMO-CHALEWOTE", store.EnvTest)
		o := b.order(t, store.EnvTest, "DEMO-CHALEWOTE", "DEMO-CHALEWOTE-1", "DEMO-CHALEWOTE-1-GA", 3)
		inside := o.Tickets[0].Code
		require.True(t, b.scan(t, door, inside, "DEMO-CHALEWOTE-1").Admitted())

		one := b.voidWith(t, tickets.VoidRequest{Code: inside, Reason: "Refunded at the box office"}, 1)
		require.Equal(t, o.Reference, one.OrderReference)
		require.Len(t, one.Tickets, 1)
		require.Equal(t, store.TicketVoid, one.Tickets[0].Status)
		require.NotNil(t, one.Tickets[0].CheckedInAt, "voiding keeps what happened at the door")

		all := b.voidWith(t, tickets.VoidRequest{OrderReference: o.Reference}, 2)
		require.Len(t, all.Tickets, 3)
		for _, tk := range all.Tickets {
			require.Equal(t, store.TicketVoid, tk.Status)
		}
		b.voidWith(t, tickets.VoidRequest{OrderReference: o.Reference}, 0)

		types, data := b.events(t, o.Reference, 2)
		require.Equal(t, []string{"ticket.checked_in", "ticket.voided", "ticket.voided", "ticket.voided"}, types)
		require.Equal(t, o.Reference, data[1]["order_reference"])
		require.Equal(t, inside, data[1]["ticket"].(map[string]any)["code"])
		require.Equal(t, o.Tickets[1].Code, data[2]["ticket"].(map[string]any)["code"])

		require.Equal(t, checkin.Void, *b.scan(t, door, inside, "DEMO-CHALEWOTE-1", exit).Reason)
		require.Equal(t, checkin.Void, *b.scan(t, door, o.Tickets[1].Code, "DEMO-CHALEWOTE-1").Reason)
		rec, err := b.svc.Ticket(ctx, inside)
		require.NoError(t, err)
		require.True(t, rec.Inside, "a voided ticket inside stays recorded inside")
		require.Equal(t, "Refunded at the box office", rec.VoidReason)
		require.NotEmpty(t, rec.VoidedAt)
		require.Len(t, rec.Scans, 2)
		require.Equal(t, "Gate DEMO-CHALEWOTE", rec.Scans[0].ScannerName)

		st, err := b.svc.Stats(ctx, door, int64(b.f.ID(t, "DEMO-CHALEWOTE-1")))
		require.NoError(t, err)
		require.Equal(t, checkin.Stats{EventdateID: st.EventdateID, RejectedScans: 2}, *st)

		for _, r := range []struct {
			req  tickets.VoidRequest
			code apperr.Code
		}{
			{tickets.VoidRequest{}, apperr.ValidationFailed},
			{tickets.VoidRequest{Code: inside, OrderReference: o.Reference}, apperr.ValidationFailed},
			{tickets.VoidRequest{Code: inside, Reason: "bad\x00reason"}, apperr.ValidationFailed},
			{tickets.VoidRequest{Code: "NOSUCHCODE"}, apperr.NotFound},
			{tickets.VoidRequest{Code: "TEST\x00"}, apperr.NotFound},
			{tickets.VoidRequest{OrderReference: "sbx_nosuchorder0000000000000"}, apperr.NotFound},
			{tickets.VoidRequest{OrderReference: "sbx_\x00"}, apperr.NotFound},
		} {
			_, err := b.tickets.Void(ctx, r.req)
			require.Equal(t, r.code, apperr.CodeOf(err), "%+v: %v", r.req, err)
		}
		_, err = b.svc.Ticket(ctx, "NOSUCH\x00")
		require.Equal(t, apperr.NotFound, apperr.CodeOf(err))
	})
}

// TestFeed: a date's feed returns the scans recorded after it started,
// each once, in order, as its door saw it, in the scanner's environment
// only; Follow sends each of them once, however the wakes come.
func TestFeed(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		b := setup(t, db)
		ctx := context.Background()
		door, live := b.scanner(t, "DEMO-CHALEWOTE", store.EnvTest), b.scanner(t, "DEMO-CHALEWOTE", store.EnvLive)
		code := b.gaCode(t, store.EnvTest)
		before := b.scan(t, door, code, "DEMO-CHALEWOTE-1")

		feed, err := b.svc.Feed(ctx, door, int64(b.f.ID(t, "DEMO-CHALEWOTE-1")))
		require.NoError(t, err)
		var want []*checkin.View
		for _, c := range []string{code, "UNKNOWN", code} {
			want = append(want, b.scan(t, door, c, "DEMO-CHALEWOTE-1", exit))
		}
		b.scan(t, live, code, "DEMO-CHALEWOTE-1")
		b.scan(t, door, code, "DEMO-CHALEWOTE-2")
		got := readFeed(t, feed)
		require.NotContains(t, got, before, "a feed starts now")
		require.Equal(t, want, got)
		require.Empty(t, readFeed(t, feed), "each scan once")

		wake := make(chan struct{}, 1)
		sent := make(chan *checkin.View)
		following, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			feed.Follow(following, wake, func(v *checkin.View) bool { sent <- v; return true })
		}()
		for i := range 3 {
			v := b.scan(t, door, code, "DEMO-CHALEWOTE-1")
			select {
			case wake <- struct{}{}:
			default: // a wake not taken yet covers this scan too
			}
			select {
			case got := <-sent:
				require.Equal(t, v, got, "scan %d", i)
			case <-time.After(time.Minute):
				t.Fatalf("scan %d was not sent", i)
			}
		}
		cancel()
		<-done

		_, err = b.svc.Feed(ctx, door, int64(b.f.ID(t, "DEMO-HIGHLIFE-1")))
		require.Equal(t, apperr.EventDateNotFound, apperr.CodeOf(err))
	})
}

// readFeed reads a feed until it has nothing more, nothing held back
// included: on PostgreSQL any writing transaction of the cluster, another
// test's or another process's, holds scans back while it runs, for
// seconds on a loaded machine.
func readFeed(t *testing.T, f *checkin.Feed) []*checkin.View {
	t.Helper()
	var out []*checkin.View
	deadline := time.Now().Add(time.Minute)
	for {
		scans, held, err := f.Next(context.Background())
		require.NoError(t, err)
		out = append(out, scans...)
		if len(scans) == 0 && !held {
			return out
		}
		if len(scans) == 0 {
			require.True(t, time.Now().Before(deadline), "scans held back for a minute")
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// TestFeedWaitsForOlderTransactions (PostgreSQL): a scan committed while
// an older transaction is still open is held back, not skipped: the older
// transaction may still record a scan that sorts before it, which a
// follower that had moved past the later one would never see. A feed
// started meanwhile still starts now: the scans committed before it are
// not read, though they sort after its start.
func TestFeedWaitsForOlderTransactions(t *testing.T) {
	t.Parallel()
	for _, kind := range storetest.Kinds() {
		if kind != "postgres" {
			continue
		}
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			db := storetest.MustOpen(t, kind)
			b := setup(t, db)
			ctx := context.Background()
			door := b.scanner(t, "DEMO-CHALEWOTE", store.EnvTest)
			code := b.gaCode(t, store.EnvTest)

			// The older transaction is a scan of its own, stuck between
			// taking its transaction id and recording.
			older, err := db.BeginTx(ctx, nil)
			require.NoError(t, err)
			defer older.Rollback() //nolint:errcheck // committed below
			var xid string
			require.NoError(t, older.NewRaw("SELECT pg_current_xact_id()::text").Scan(ctx, &xid))

			early := b.scan(t, door, code, "DEMO-CHALEWOTE-1")
			feed, err := b.svc.Feed(ctx, door, int64(b.f.ID(t, "DEMO-CHALEWOTE-1")))
			require.NoError(t, err)
			later := b.scan(t, door, code, "DEMO-CHALEWOTE-1")
			scans, held, err := feed.Next(ctx)
			require.NoError(t, err)
			require.Empty(t, scans, "the later scan waits while an older transaction (%s) is open", xid)
			require.True(t, held, "and the follower is told to look again")

			row := &store.CheckIn{PublicID: "chk_older", ScannerID: door.ID, Environment: store.EnvTest,
				EventDateID: int64(b.f.ID(t, "DEMO-CHALEWOTE-1")), Direction: store.CheckInEntry, ScannedAt: time.Now(),
				Result: store.CheckInRejected, Reason: ptr(checkin.UnknownCode), Answer: `{"id": "chk_older"}`, CreatedAt: time.Now()}
			require.NoError(t, store.InsertCheckIn(ctx, older, row))
			require.NoError(t, older.Commit())
			got := readFeed(t, feed)
			require.Len(t, got, 2, "not the scan committed before the feed started (%s)", early.ID)
			require.Equal(t, "chk_older", got[0].ID, "the older transaction's scan sorts first")
			require.Equal(t, later, got[1])
		})
	}
}
