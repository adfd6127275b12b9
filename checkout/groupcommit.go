package checkout

import (
	"errors"
	"strconv"
	"strings"
	"sync"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/idempotency"
	"github.com/boxoffice/boxoffice/store"
)

// Live paid creates of the same tickets are written in one transaction
// (store.GroupCommit). In a flash sale every create updates one ticket
// row, and a row lock is held until the transaction's commit is flushed to
// disk: one order per transaction would sell at most one order per WAL
// flush, however fast the statements. Each create's writes are its own
// (see Service.writeHeld): a refusal (sold_out, a key that has an answer)
// undoes the little it did and leaves the others alone.
//
// Creates are grouped by the set of tickets they hold (lineKey), and each
// takes its rows in id order, so batches of different carts cannot
// deadlock.

// groupCommits are the batches of each database handle: services are
// plain values (tests copy them), so the batches cannot live in one.
var groupCommits sync.Map // *store.DB → *store.GroupCommit

func batchesOf(db *store.DB) *store.GroupCommit {
	g, _ := groupCommits.LoadOrStore(db, &store.GroupCommit{Refusal: refusal})
	return g.(*store.GroupCommit)
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
