package checkout

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/idempotency"
	"github.com/boxoffice/boxoffice/payments"
	"github.com/boxoffice/boxoffice/store"
	"github.com/uptrace/bun"
)

// Live paid creates of the same tickets are written together
// (store.GroupCommit): in a flash sale every create updates one ticket
// row, and a row lock is held until the transaction's commit is flushed
// to disk, so one order per transaction would sell at most one order per
// WAL flush, however fast the statements. A batch writes every create's
// payment, answer and order first and then takes the stock of them all
// with one conditional UPDATE per ticket, just before its commit, so the
// row is locked only for that statement and the commit; several batches
// (heldWriters) write their orders at once and queue only there. When
// the batch together wants more than is left, it is rolled back and
// written again create by create, each taking its stock first
// (writeHeld), so that exactly those that fit are sold and the others
// get sold_out.
//
// Creates are grouped by the set of tickets they hold (lineKey), and each
// batch takes its rows in id order, so batches cannot deadlock.

// heldWriters is how many batches of one set of tickets are written at
// once. The server's pool keeps 8 connections; a sale of one ticket uses
// up to this many of them.
const heldWriters = 2

// heldBatches returns the service's batches of live paid creates, made on
// first use so that a Service written as a literal needs no constructor;
// they go with the service when it is no longer used.
func (s *Service) heldBatches() *store.GroupCommit[*heldJob] {
	if g := s.batches.Load(); g != nil {
		return g
	}
	s.batches.CompareAndSwap(nil, &store.GroupCommit[*heldJob]{Writers: heldWriters})
	return s.batches.Load()
}

// heldJob is one live paid create of a batch; sess is its answer once
// written.
type heldJob struct {
	req   *request
	k     *cart
	order *store.Order
	items []store.OrderItem
	a     *attempt
	now   time.Time
	sess  *Session
}

// errShort ends a batch whose creates together want more than is left.
var errShort = errors.New("checkout: the batch wants more than is left")

// writeHeldBatch writes a batch of creates of the same tickets and
// returns each one's outcome: nil, a refusal of its own (sold_out, its
// key already having an answer), or the error that failed the batch.
func (s *Service) writeHeldBatch(ctx context.Context, p payments.InTx, jobs []*heldJob) []error {
	errs := make([]error, len(jobs))
	err := s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		clear(errs)
		return s.writeTogether(ctx, tx, p, jobs, errs)
	})
	if errors.Is(err, errShort) {
		err = s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			clear(errs)
			for i, j := range jobs {
				j.order.ID = 0 // the first pass's ids were rolled back with it
				for n := range j.items {
					j.items[n].ID = 0
				}
				j.sess, errs[i] = s.writeHeld(ctx, tx, p, j.req, j.k, j.order, j.items, j.a, j.now)
				if errs[i] != nil && !refusal(errs[i]) {
					return errs[i]
				}
			}
			return nil
		})
	}
	if err != nil {
		for i := range errs {
			errs[i] = err
		}
	}
	return errs
}

// writeTogether writes every create of a batch, each kind of row in one
// statement for them all (on PostgreSQL: the payments, the answers, the
// orders, their items), then takes their stock together: one
// conditional UPDATE per ticket, in id order. A create whose key already
// has an answer is refused (idempotency.ErrTaken) and the others go on;
// its payment row stays, as it would after Save refused it alone. The
// creates of this path hold no idempotency claim: they call nothing
// outside the database.
// Errors: errShort when the stock does not cover them all,
// payment_gateway_unavailable when the payments cannot be stored.
func (s *Service) writeTogether(ctx context.Context, tx bun.Tx, p payments.InTx, jobs []*heldJob, errs []error) error {
	reqs := make([]payments.Request, len(jobs))
	for i, j := range jobs {
		reqs[i] = s.paymentRequest(j.req, j.k, j.order)
	}
	pays, err := p.CreateAllTx(ctx, tx, reqs)
	if err != nil {
		return s.paid(nil, err, nil)
	}
	saves := make([]idempotency.Saving, len(jobs))
	for i, j := range jobs {
		if err := s.paid(pays[i], nil, j.order); err != nil {
			return err
		}
		var body []byte
		j.sess, body = s.answer(j.order)
		saves[i] = idempotency.Saving{Scope: j.a.scope, Key: j.a.key, Fingerprint: j.a.fingerprint, Response: body}
	}
	taken, err := s.Idempotency.SaveAll(ctx, tx, saves)
	if err != nil {
		return err
	}
	var (
		orders []*store.Order
		items  [][]store.OrderItem
		total  = map[int64]int64{}
		ids    []int64
		now    time.Time
	)
	for i, j := range jobs {
		if taken[i] != nil {
			errs[i], j.sess = taken[i], nil
			continue
		}
		orders, items = append(orders, j.order), append(items, j.items)
		qty, lineIDs := lockOrder(j.req)
		for id, n := range qty {
			total[id] += n
		}
		ids, now = lineIDs, j.now
	}
	if err := store.InsertOrders(ctx, tx, orders, items); err != nil {
		return err
	}
	for _, id := range ids {
		ok, err := store.HoldStock(ctx, tx, id, total[id], false, now)
		if err != nil {
			return err
		}
		if !ok {
			return errShort
		}
	}
	return nil
}

// refusal reports whether err is a create's own answer, which leaves its
// batch going: a business refusal, or its key already having an answer.
func refusal(err error) bool {
	var ae *apperr.Error
	return errors.As(err, &ae) || errors.Is(err, idempotency.ErrTaken)
}

// lineKey names the set of tickets a cart holds.
func lineKey(req *request) string {
	_, ids := lockOrder(req)
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(id, 10))
	}
	return b.String()
}
