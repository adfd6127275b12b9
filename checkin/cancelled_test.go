package checkin_test

import (
	"context"
	"testing"

	"github.com/boxoffice/boxoffice/checkin"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// TestCancelledDate: nobody enters a cancelled date. Each of its valid
// tickets is void at the door, and the scan changes nothing; a person
// inside can still go out; another date of the event is not touched.
func TestCancelledDate(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		b := setup(t, db)
		door := b.scanner(t, "DEMO-CHALEWOTE", store.EnvTest)
		const date = "DEMO-CHALEWOTE-1"
		o := b.order(t, store.EnvTest, "DEMO-CHALEWOTE", date, "DEMO-CHALEWOTE-1-GA", 2)
		inside, outside := o.Tickets[0].Code, o.Tickets[1].Code
		require.True(t, b.scan(t, door, inside, date).Admitted())
		other := b.order(t, store.EnvTest, "DEMO-CHALEWOTE", "DEMO-CHALEWOTE-2", "DEMO-CHALEWOTE-2-GA", 1).Tickets[0].Code

		_, err := store.CancelEventDate(context.Background(), db, int64(b.f.ID(t, date)), "Storm", false, b.f.Now)
		require.NoError(t, err)

		refused := b.scan(t, door, outside, date)
		require.False(t, refused.Admitted())
		require.Equal(t, checkin.Void, reason(refused))
		require.Equal(t, store.TicketValid, refused.Ticket.Status, "the scan changes nothing")
		require.Equal(t, checkin.Void, reason(b.scan(t, door, outside, date)), "every time")
		require.True(t, b.scan(t, door, inside, date, exit).Admitted(), "out of a cancelled date")
		require.Equal(t, checkin.Void, reason(b.scan(t, door, inside, date)), "and not back in")
		require.Equal(t, checkin.UnknownCode, reason(b.scan(t, door, "TESTNOSUCHCODE0000000000000000000000", date)))
		require.True(t, b.scan(t, door, other, "DEMO-CHALEWOTE-2").Admitted(), "another date")
	})
}
