package checkin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/checkin"
	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/ratelimit"
	"github.com/boxoffice/boxoffice/refunds"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"
)

// manifest reads a page of a date's manifest from since.
func (b *bundle) manifest(t *testing.T, sc checkin.Scanner, date, since string, limit *int) *checkin.ManifestPage {
	t.Helper()
	p, err := b.svc.Manifest(context.Background(), sc, checkin.ManifestRequest{EventdateID: int64(b.f.ID(t, date)), Since: since, Limit: limit})
	require.NoError(t, err)
	return p
}

// follow reads a date's manifest from since until caught up, as a door
// syncs, and returns what it listed by ticket and the next since.
func (b *bundle) follow(t *testing.T, sc checkin.Scanner, date, since string) (map[string]checkin.ManifestEntry, string) {
	t.Helper()
	var all []checkin.ManifestEntry
	for range 100 {
		p := b.manifest(t, sc, date, since, nil)
		all, since = append(all, p.Entries...), p.NextSince
		if !p.HasMore {
			return byTicket(all), since
		}
	}
	t.Fatal("the manifest never caught up")
	return nil, ""
}

// listedAgain requires that every entry of got is as in was: a read lists
// a change again (at least once) while a transaction older than it runs
// somewhere on the server, but nothing new.
func listedAgain(t *testing.T, got, was map[string]checkin.ManifestEntry, except ...string) {
	t.Helper()
	for id, e := range got {
		if !slices.Contains(except, id) {
			require.Equal(t, was[id], e, "%s is listed only as it was", id)
		}
	}
}

// byTicket indexes a manifest's entries by ticket id, the last one
// winning, as a door keeps them.
func byTicket(es []checkin.ManifestEntry) map[string]checkin.ManifestEntry {
	out := map[string]checkin.ManifestEntry{}
	for _, e := range es {
		out[e.TicketID] = e
	}
	return out
}

// TestManifest: a date's manifest lists its tickets of the scanner's
// environment as code hashes, in pages, and from a since token exactly
// what changed after it: a scan in or out, a void, a refund.
func TestManifest(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		b := setup(t, db)
		ctx := context.Background()
		const date = "DEMO-CHALEWOTE-1"
		door, liveDoor := b.scanner(t, "DEMO-CHALEWOTE", store.EnvTest), b.scanner(t, "DEMO-CHALEWOTE", store.EnvLive)
		o := b.order(t, store.EnvTest, "DEMO-CHALEWOTE", date, "DEMO-CHALEWOTE-1-GA", 3)
		live := b.order(t, store.EnvLive, "DEMO-CHALEWOTE", date, "DEMO-CHALEWOTE-1-GA", 1)
		b.order(t, store.EnvTest, "DEMO-CHALEWOTE", "DEMO-CHALEWOTE-2", "DEMO-CHALEWOTE-2-GA", 1) // another date

		first := b.manifest(t, door, date, "", nil)
		require.False(t, first.HasMore)
		require.Len(t, first.Entries, 3, "the date's test tickets only")
		for i, e := range first.Entries {
			tk := o.Tickets[i]
			require.Equal(t, checkin.ManifestEntry{TicketID: tk.ID, CodeHash: checkin.CodeHash(tk.Code), TicketName: tk.TicketName,
				Position: int64(i + 1), TicketsInOrder: 3, Status: store.TicketValid}, e)
			require.Regexp(t, `^[0-9a-f]{64}$`, e.CodeHash)
		}
		body, err := json.Marshal(first.Entries)
		require.NoError(t, err)
		for _, tk := range o.Tickets {
			require.NotContains(t, string(body), tk.Code, "never a code")
		}
		require.NotContains(t, string(body), o.Reference, "never the order's reference")
		require.NotContains(t, string(body), "Ama", "never the buyer")

		liveOnly := b.manifest(t, liveDoor, date, "", nil)
		require.Len(t, liveOnly.Entries, 1)
		require.Equal(t, live.Tickets[0].ID, liveOnly.Entries[0].TicketID, "a live key lists live tickets only")

		// Pages of limit, each from the last one's next_since.
		var paged []checkin.ManifestEntry
		since := ""
		for range 3 {
			p := b.manifest(t, door, date, since, ptr(1))
			paged = append(paged, p.Entries...)
			since = p.NextSince
			if !p.HasMore {
				break
			}
		}
		require.Equal(t, first.Entries, paged)
		firstState := byTicket(first.Entries)
		same, _ := b.follow(t, door, date, first.NextSince)
		listedAgain(t, same, firstState)

		// Changes: in, out; a void; a refund. Each read lists them (and,
		// on a busy PostgreSQL server, may list earlier ones again).
		require.True(t, b.scan(t, door, o.Tickets[0].Code, date).Admitted())
		in, since := b.follow(t, door, date, first.NextSince)
		require.Equal(t, checkin.ManifestEntry{TicketID: o.Tickets[0].ID, CodeHash: checkin.CodeHash(o.Tickets[0].Code),
			TicketName: o.Tickets[0].TicketName, Position: 1, TicketsInOrder: 3, Status: store.TicketCheckedIn, Inside: true},
			in[o.Tickets[0].ID])
		listedAgain(t, in, firstState, o.Tickets[0].ID)
		require.True(t, b.scan(t, door, o.Tickets[0].Code, date, exit).Admitted())
		out, since := b.follow(t, door, date, since)
		require.Contains(t, out, o.Tickets[0].ID)
		require.False(t, out[o.Tickets[0].ID].Inside, "an exit on any device shows")

		b.void(t, o.Tickets[1].Code)
		rs := &refunds.Service{DB: db, Orders: b.f.Service, Idempotency: b.f.Service.Idempotency, Webhooks: b.f.Service.Webhooks,
			Now: b.f.Service.Now, Payments: b.f.Service.Payments,
			EnqueueSend: func(context.Context, bun.Tx, int64) error { return nil }}
		_, _, err = rs.Create(ctx, checkout.Caller{AppID: b.f.Demo.App.App.ID, Environment: store.EnvTest},
			refunds.Request{Reference: o.Reference, Key: "refund-1", Input: &refunds.Input{Tickets: []*string{&o.Tickets[2].ID}}})
		require.NoError(t, err)
		changed, _ := b.follow(t, door, date, since)
		require.Equal(t, store.TicketVoid, changed[o.Tickets[1].ID].Status, "voided")
		require.Equal(t, store.TicketVoid, changed[o.Tickets[2].ID].Status, "refunded")

		// Everything from the start, as a new device reads it: each ticket
		// as it is now.
		all, _ := b.follow(t, door, date, "")
		require.Len(t, all, 3)
		require.Equal(t, store.TicketCheckedIn, all[o.Tickets[0].ID].Status)
		require.False(t, all[o.Tickets[0].ID].Inside)

		for _, tc := range []struct {
			name  string
			req   checkin.ManifestRequest
			code  apperr.Code
			field string
		}{
			{"ErrLimitZero", checkin.ManifestRequest{EventdateID: int64(b.f.ID(t, date)), Limit: ptr(0)}, apperr.ValidationFailed, "limit"},
			{"ErrLimitTooLarge", checkin.ManifestRequest{EventdateID: int64(b.f.ID(t, date)), Limit: ptr(1001)}, apperr.ValidationFailed, "limit"},
			{"ErrSinceGarbage", checkin.ManifestRequest{EventdateID: int64(b.f.ID(t, date)), Since: "nope"}, apperr.ValidationFailed, "since"},
			{"ErrSinceOfAnotherDate", checkin.ManifestRequest{EventdateID: int64(b.f.ID(t, "DEMO-CHALEWOTE-2")), Since: first.NextSince},
				apperr.ValidationFailed, "since"},
			{"ErrEventDateNotFound", checkin.ManifestRequest{EventdateID: int64(b.f.ID(t, "DEMO-HIGHLIFE-1"))}, apperr.EventDateNotFound, ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, err := b.svc.Manifest(ctx, door, tc.req)
				e := apperr.From(err)
				require.Equal(t, tc.code, e.Code)
				if tc.field != "" {
					require.Contains(t, e.Details, tc.field)
				}
			})
		}
	})
}

// TestManifestOlderTransactions (PostgreSQL): a ticket change is listed
// as soon as it is committed, even while an older transaction is open;
// a change that older transaction commits later sorts before it, and the
// read after the scanner caught up lists it (and the later one again):
// nothing is passed over, whatever order transactions commit in.
func TestManifestOlderTransactions(t *testing.T) {
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
			const date = "DEMO-CHALEWOTE-1"
			door := b.scanner(t, "DEMO-CHALEWOTE", store.EnvTest)
			o := b.order(t, store.EnvTest, "DEMO-CHALEWOTE", date, "DEMO-CHALEWOTE-1-GA", 2)
			startState, startSince := b.follow(t, door, date, "")
			require.Len(t, startState, 2)

			older, err := db.BeginTx(ctx, nil)
			require.NoError(t, err)
			defer older.Rollback() //nolint:errcheck // committed below
			var xid string
			require.NoError(t, older.NewRaw("SELECT pg_current_xact_id()::text").Scan(ctx, &xid))

			require.True(t, b.scan(t, door, o.Tickets[1].Code, date).Admitted())
			fresh, freshSince := b.follow(t, door, date, startSince)
			require.True(t, fresh[o.Tickets[1].ID].Inside, "listed at once, though an older transaction (%s) is open", xid)
			listedAgain(t, fresh, startState, o.Tickets[1].ID)

			_, err = store.VoidTickets(ctx, older, []int64{ticketRowID(t, db, o.Tickets[0].ID)}, nil, time.Now())
			require.NoError(t, err)
			require.NoError(t, older.Commit())
			got, gotSince := b.follow(t, door, date, freshSince)
			require.Equal(t, store.TicketVoid, got[o.Tickets[0].ID].Status,
				"the older transaction's change, placed before one already listed, is listed after it commits")
			require.True(t, got[o.Tickets[1].ID].Inside)
			rest, _ := b.follow(t, door, date, gotSince)
			listedAgain(t, rest, got)
		})
	}
}

func ticketRowID(t *testing.T, db *store.DB, publicID string) int64 {
	t.Helper()
	var id int64
	require.NoError(t, db.NewSelect().Table("issued_tickets").Column("id").Where("public_id = ?", publicID).
		Scan(context.Background(), &id))
	return id
}

// batchScan is a batch scan of code at a demo date under key.
func (b *bundle) batchScan(t *testing.T, key, code, date string, edits ...func(*checkin.Input)) checkin.BatchScan {
	t.Helper()
	return checkin.BatchScan{Key: &key, Input: b.input(t, code, date, edits...)}
}

// answers renders a batch's results as JSON, to compare two batches.
func answers(t *testing.T, rs []checkin.BatchResult) []string {
	t.Helper()
	out := make([]string, len(rs))
	for i, r := range rs {
		var v any = r.CheckIn
		if r.Err != nil {
			v = map[string]any{"code": r.Err.Code, "message": r.Err.Message, "details": r.Err.Details}
		}
		b, err := json.Marshal(v)
		require.NoError(t, err)
		out[i] = string(b)
	}
	return out
}

func countCheckIns(t *testing.T, db *store.DB) int {
	t.Helper()
	n, err := db.NewSelect().Model((*store.CheckIn)(nil)).Count(context.Background())
	require.NoError(t, err)
	return int(n)
}

// TestBatch: a door's queue, sent as one batch, is processed in order,
// each scan as a scan with its own key; a scan that is not one answers
// its error in its place; the same batch again answers the same and
// records nothing new.
func TestBatch(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		b := setup(t, db)
		ctx := context.Background()
		const date = "DEMO-CHALEWOTE-1"
		door := b.scanner(t, "DEMO-CHALEWOTE", store.EnvTest)
		o := b.order(t, store.EnvTest, "DEMO-CHALEWOTE", date, "DEMO-CHALEWOTE-1-GA", 2)
		a, c := o.Tickets[0].Code, o.Tickets[1].Code
		offlineAt := b.f.Now.Add(-10 * time.Minute)
		scans := []checkin.BatchScan{
			b.batchScan(t, "k1", a, date, at(offlineAt)),
			b.batchScan(t, "k2", c, date, at(offlineAt.Add(time.Second))),
			b.batchScan(t, "k3", a, date, exit, at(offlineAt.Add(2*time.Second))),
			b.batchScan(t, "k4", "NOSUCHCODE", date, at(offlineAt.Add(3*time.Second))),
			{Input: b.input(t, a, date)}, // no key
			b.batchScan(t, "k6", a, date, func(in *checkin.Input) { in.ScannedAt = ptr("yesterday") }),
			b.batchScan(t, "k7", a, "DEMO-HIGHLIFE-1"),
			b.batchScan(t, "k8", c, date, at(offlineAt.Add(4*time.Second))),
			{Key: ptr(strings.Repeat("k", 129)), Input: b.input(t, a, date)},
			{Key: ptr("k10"), Problems: apperr.Details{"scan": {"must be a JSON object"}}},
		}
		rs, err := b.svc.Batch(ctx, door, scans, nil)
		require.NoError(t, err)
		require.Len(t, rs, len(scans))
		for i, want := range []string{"admitted", "admitted", "admitted", checkin.UnknownCode} {
			require.Nil(t, rs[i].Err, "scan %d", i)
			if want == "admitted" {
				require.True(t, rs[i].CheckIn.Admitted(), "scan %d", i)
			} else {
				require.Equal(t, want, *rs[i].CheckIn.Reason)
			}
			require.True(t, rs[i].CheckIn.Offline, "scan %d was made 10 minutes ago", i)
		}
		require.Equal(t, store.CheckInExit, rs[2].CheckIn.Direction, "in the order sent: the exit after the entry")
		require.Equal(t, apperr.ValidationFailed, rs[4].Err.Code)
		require.Equal(t, []string{"is required"}, rs[4].Err.Details["idempotency_key"])
		require.Equal(t, apperr.ValidationFailed, rs[5].Err.Code)
		require.Contains(t, rs[5].Err.Details, "scanned_at")
		require.Equal(t, apperr.EventDateNotFound, rs[6].Err.Code)
		require.Equal(t, checkin.AlreadyCheckedIn, *rs[7].CheckIn.Reason)
		require.Equal(t, []string{"must be at most 128 characters"}, rs[8].Err.Details["idempotency_key"])
		require.Equal(t, []string{"must be a JSON object"}, rs[9].Err.Details["scan"])
		recorded := countCheckIns(t, db)
		require.Equal(t, 5, recorded)

		again, err := b.svc.Batch(ctx, door, scans, nil)
		require.NoError(t, err)
		require.Equal(t, answers(t, rs), answers(t, again), "the same batch again answers the same")
		require.Equal(t, recorded, countCheckIns(t, db), "and records nothing new")

		reused, err := b.svc.Batch(ctx, door, []checkin.BatchScan{b.batchScan(t, "k1", c, date)}, nil)
		require.NoError(t, err)
		require.Equal(t, apperr.IdempotencyConflict, reused[0].Err.Code, "a key used with another scan")

		for _, tc := range []struct {
			name     string
			scans    []checkin.BatchScan
			problems apperr.Details
			want     string
		}{
			{"ErrEmpty", []checkin.BatchScan{}, nil, "must hold 1 to 500 scans"},
			{"ErrTooMany", make([]checkin.BatchScan, checkin.MaxBatch+1), nil, "must hold 1 to 500 scans"},
			{"ErrBody", nil, apperr.Details{"body": {"must be a JSON object"}}, ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, err := b.svc.Batch(ctx, door, tc.scans, tc.problems)
				e := apperr.From(err)
				require.Equal(t, apperr.ValidationFailed, e.Code)
				if tc.want != "" {
					require.Equal(t, []string{tc.want}, e.Details["scans"])
				}
				require.Equal(t, recorded+0, countCheckIns(t, db))
			})
		}
	})
}

// TestOfflineConflict: device B admits a ticket offline; device A,
// online, admits it after; B's queued scan, received later, is recorded
// already_checked_in and offline, and counted in offline_conflicts. A
// scan received within 30 seconds is not offline, and an online refusal
// is no conflict.
func TestOfflineConflict(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		b := setup(t, db)
		const date = "DEMO-CHALEWOTE-1"
		a, bDevice := b.scanner(t, "DEMO-CHALEWOTE", store.EnvTest), b.scanner(t, "DEMO-CHALEWOTE", store.EnvTest)
		code := b.gaCode(t, store.EnvTest)

		online := b.scan(t, a, code, date, at(b.f.Now.Add(-checkin.OfflineAfter)))
		require.True(t, online.Admitted())
		require.False(t, online.Offline, "30 seconds late is not offline")
		require.False(t, b.scan(t, a, code, date).Offline)

		late := b.scan(t, bDevice, code, date, at(b.f.Now.Add(-5*time.Minute)))
		require.Equal(t, store.CheckInRejected, late.Result)
		require.Equal(t, checkin.AlreadyCheckedIn, reason(late))
		require.True(t, late.Offline)
		require.Equal(t, online.ScannedAt, late.Previous.ScannedAt, "it names the admission that stands")

		st, err := b.svc.Stats(context.Background(), a, int64(b.f.ID(t, date)))
		require.NoError(t, err)
		require.Equal(t, int64(2), st.RejectedScans)
		require.Equal(t, int64(1), st.OfflineConflicts, "only the offline entry is a conflict")

		// An offline exit refused is no conflict either.
		other := b.gaCode(t, store.EnvTest)
		require.Equal(t, checkin.NotInside, reason(b.scan(t, bDevice, other, date, exit, at(b.f.Now.Add(-5*time.Minute)))))
		st, err = b.svc.Stats(context.Background(), a, int64(b.f.ID(t, date)))
		require.NoError(t, err)
		require.Equal(t, int64(1), st.OfflineConflicts)
	})
}

// TestUnknownCodeBudget: a scanner key's scans of codes that match no
// ticket are budgeted; beyond the budget they are refused
// rate_limit_exceeded with a Retry-After and not recorded, while scans
// of real tickets (a live code at a test door included) still go
// through, and another key has its own budget.
func TestUnknownCodeBudget(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		b := setup(t, db)
		ctx := context.Background()
		const budget = 3
		limits := &ratelimit.Store{Now: func() time.Time { return b.f.Now }}
		b.svc.UnknownCodes = ratelimit.NewLimits(limits, ratelimit.Config{ScannerUnknownCodes: budget,
			Prefix: fmt.Sprintf("unknown-%p", b)}).ScannerUnknown
		const date = "DEMO-CHALEWOTE-1"
		door, other := b.scanner(t, "DEMO-CHALEWOTE", store.EnvTest), b.scanner(t, "DEMO-CHALEWOTE", store.EnvTest)
		for i := range budget {
			require.Equal(t, checkin.UnknownCode, reason(b.scan(t, door, fmt.Sprintf("GUESS%d", i), date)))
		}
		recorded := countCheckIns(t, db)
		_, _, err := b.svc.CheckIn(ctx, door, checkin.Request{Key: "guess", Input: b.input(t, "GUESSMORE", date)})
		e := apperr.From(err)
		require.Equal(t, apperr.RateLimitExceeded, e.Code)
		require.Positive(t, e.RetryAfter)
		require.LessOrEqual(t, e.RetryAfter, 120, "within the sliding minute's two windows")
		require.Equal(t, recorded, countCheckIns(t, db), "a refused guess is not recorded")

		require.True(t, b.scan(t, door, b.gaCode(t, store.EnvTest), date).Admitted(), "a real ticket is never limited")
		require.Equal(t, checkin.UnknownCode, reason(b.scan(t, door, b.gaCode(t, store.EnvLive), date)),
			"a live ticket's code at a test door is a real ticket: answered, not limited")
		require.Equal(t, checkin.UnknownCode, reason(b.scan(t, other, "GUESSX", date)), "another key has its own budget")

		rs, err := b.svc.Batch(ctx, door, []checkin.BatchScan{b.batchScan(t, "b1", "GUESSY", date),
			b.batchScan(t, "b2", b.gaCode(t, store.EnvTest), date)}, nil)
		require.NoError(t, err)
		require.Equal(t, apperr.RateLimitExceeded, rs[0].Err.Code, "in a batch, the guess answers its error in its place")
		require.True(t, rs[1].CheckIn.Admitted())
	})
}
