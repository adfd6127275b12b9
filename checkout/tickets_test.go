package checkout_test

import (
	"context"
	"encoding/json"
	"regexp"
	"sync"
	"testing"

	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

var (
	liveCode = regexp.MustCompile(`^[A-Z2-7]{32}$`)
	testCode = regexp.MustCompile(`^TEST[A-Z2-7]{32}$`)
	ticketID = regexp.MustCompile(`^itk_[a-z2-7]{26}$`)
	pageURL  = regexp.MustCompile(`^http://localhost:8080/tickets/[a-z2-7]{32}$`)
)

// orderEvents returns the data.order of every webhook event of an order,
// in sequence order.
func (b *lifecycleBundle) orderEvents(t *testing.T, o *store.Order) []checkout.OrderView {
	t.Helper()
	var payloads []string
	require.NoError(t, b.db.NewSelect().Model((*store.WebhookEvent)(nil)).Column("payload").
		Where("order_id = ?", o.ID).Order("sequence").Scan(context.Background(), &payloads))
	out := make([]checkout.OrderView, len(payloads))
	for i, p := range payloads {
		var body struct {
			Data struct {
				Order checkout.OrderView `json:"order"`
			} `json:"data"`
		}
		require.NoError(t, json.Unmarshal([]byte(p), &body))
		out[i] = body.Data.Order
	}
	return out
}

// view reads an order as the API shows it.
func (b *lifecycleBundle) view(t *testing.T, o *store.Order) *checkout.OrderView {
	t.Helper()
	v, err := b.svc.OrderView(context.Background(), checkout.Caller{AppID: o.AppID, Environment: o.Environment}, o.Reference)
	require.NoError(t, err)
	return v
}

// TestIssue is spec/fulfilment.md section 1's rules 1 and 2: the tickets
// of an order are issued once, as it becomes paid or completed, and its
// webhook already carries them.
func TestIssue(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		b := setupLifecycle(t, db)
		ctx := context.Background()

		t.Run("SandboxFreeCart", func(t *testing.T) {
			o := b.order(t, store.EnvTest, "DEMO-CHALEWOTE", "DEMO-CHALEWOTE-1", "DEMO-CHALEWOTE-1-GA", 3)
			require.Equal(t, store.OrderPaid, o.Status)
			v := b.view(t, o)
			require.Len(t, v.Tickets, 3)
			for i, tk := range v.Tickets {
				require.Regexp(t, testCode, tk.Code, "a test ticket's code begins with TEST")
				require.Regexp(t, ticketID, tk.ID)
				require.Equal(t, int64(i+1), tk.Position)
				require.Equal(t, store.TicketValid, tk.Status)
				require.Equal(t, store.EnvTest, tk.Environment)
				require.Equal(t, o.Reference, tk.OrderReference)
				require.Equal(t, "Free wristband — day 1", tk.TicketName)
				require.Nil(t, tk.CheckedInAt)
			}
			require.Regexp(t, pageURL, *v.TicketsURL)
			require.Equal(t, checkout.TicketsEmail{Status: store.TicketsEmailNotSent}, v.TicketsEmail, "test orders never email the buyer")
			events := b.orderEvents(t, o)
			require.Len(t, events, 1)
			require.Equal(t, v.Tickets, events[0].Tickets, "order.paid carries the tickets")
			require.Equal(t, v.TicketsURL, events[0].TicketsURL)
		})

		t.Run("LiveFreeCart", func(t *testing.T) {
			o := b.order(t, store.EnvLive, "DEMO-CHALEWOTE", "DEMO-CHALEWOTE-1", "DEMO-CHALEWOTE-1-GA", 2)
			require.Equal(t, store.OrderCompleted, o.Status)
			v := b.view(t, o)
			require.Len(t, v.Tickets, 2)
			for _, tk := range v.Tickets {
				require.Regexp(t, liveCode, tk.Code)
			}
			require.Equal(t, store.TicketsEmailQueued, v.TicketsEmail.Status, "a live order's buyer gets an email")
			require.Equal(t, v.Tickets, b.orderEvents(t, o)[0].Tickets, "order.completed carries the tickets")
		})

		t.Run("PendingHasNone", func(t *testing.T) {
			o := b.paidOrder(t)
			v := b.view(t, o)
			require.Empty(t, v.Tickets)
			require.Nil(t, v.TicketsURL)
			require.NotNil(t, v.CheckoutURL)
			require.NotNil(t, v.ExpiresAt)
			require.Equal(t, store.TicketsEmailNotSent, v.TicketsEmail.Status)
			require.Equal(t, []checkout.LineItem{{TicketID: int64(b.id("DEMO-HIGHLIFE-REG")), Name: "Regular",
				Quantity: 2, UnitPrice: "120.00", Amount: "240.00"}}, v.Items)
			require.Equal(t, "240.00", v.TotalAmount, "the promotional price was charged")

			_, changed, err := b.svc.Settle(ctx, o.Reference, store.OrderFailed)
			require.NoError(t, err)
			require.True(t, changed)
			v = b.view(t, o)
			require.Empty(t, v.Tickets, "a failed order issues nothing")
			require.Nil(t, v.CheckoutURL, "checkout_url is for pending orders only")
			require.Nil(t, v.ExpiresAt)
		})

		// Two deliveries of the provider's callback, and the sandbox page's
		// double submit, race: the order becomes paid once, with one set of
		// tickets and one order.paid.
		for name, settle := range map[string]func(o *store.Order) error{
			"ConcurrentConfirmations": func(o *store.Order) error { _, err := b.svc.ConfirmPayment(ctx, paid(o)); return err },
			"SandboxDoubleSubmit": func(o *store.Order) error {
				_, _, err := b.svc.Settle(ctx, o.Reference, store.OrderPaid)
				return err
			},
		} {
			t.Run(name, func(t *testing.T) {
				env := store.EnvLive
				if name == "SandboxDoubleSubmit" {
					env = store.EnvTest
				}
				o := b.order(t, env, "DEMO-HIGHLIFE", "DEMO-HIGHLIFE-1", "DEMO-HIGHLIFE-REG", 3)
				var wg sync.WaitGroup
				errs := make(chan error, 8)
				for range 8 {
					wg.Go(func() { errs <- settle(o) })
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					require.NoError(t, err)
				}
				v := b.view(t, o)
				require.Equal(t, store.OrderPaid, v.Status)
				require.Len(t, v.Tickets, 3, "issued once")
				var n int
				require.NoError(t, db.NewSelect().Model((*store.IssuedTicket)(nil)).ColumnExpr("count(*)").
					Where("order_id = ?", o.ID).Scan(ctx, &n))
				require.Equal(t, 3, n)
				events := b.orderEvents(t, o)
				require.Len(t, events, 1, "one order.paid")
				require.Equal(t, v.Tickets, events[0].Tickets)
			})
		}

		t.Run("AppDeliversItself", func(t *testing.T) {
			require.NoError(t, store.SetTicketEmails(ctx, db, b.demo.App.App.ID, false, b.start))
			defer func() { require.NoError(t, store.SetTicketEmails(ctx, db, b.demo.App.App.ID, true, b.start)) }()
			o := b.order(t, store.EnvLive, "DEMO-CHALEWOTE", "DEMO-CHALEWOTE-1", "DEMO-CHALEWOTE-1-GA", 1)
			v := b.view(t, o)
			require.Len(t, v.Tickets, 1)
			require.Equal(t, store.TicketsEmailNotSent, v.TicketsEmail.Status)
		})
	})
}

// TestCodes: codes are unique across every order and environment.
func TestCodes(t *testing.T) {
	t.Parallel()
	b := setupLifecycle(t, storetest.MustOpen(t, "sqlite"))
	seen := map[string]bool{}
	for i := range 20 {
		env := store.EnvTest
		if i%2 == 0 {
			env = store.EnvLive
		}
		o := b.order(t, env, "DEMO-CHALEWOTE", "DEMO-CHALEWOTE-1", "DEMO-CHALEWOTE-1-GA", 2)
		for _, tk := range b.view(t, o).Tickets {
			require.False(t, seen[tk.Code], "code %d repeated", len(seen))
			seen[tk.Code] = true
			require.True(t, liveCode.MatchString(tk.Code) == (env == store.EnvLive))
		}
	}
	require.Len(t, seen, 40)
}
