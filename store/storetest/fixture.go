package storetest

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/store"
)

// fixtures numbers the rows fixtures make, whose references, slugs and
// emails must be unique in a database that several tests' fixtures share.
var fixtures atomic.Int64

func nextName(kind string) string {
	return "fx-" + kind + "-" + strconv.FormatInt(fixtures.Add(1), 10)
}

// Catalog is a visible event with one date and one ticket, as stored.
type Catalog struct {
	Event  store.Event
	Date   store.EventDate
	Ticket store.Ticket
}

// MustCatalog stores a visible event with one active date (starting in a
// day, ending three hours later) and one paid ticket of unlimited stock,
// after edit (which may be nil) has changed them; ids and foreign keys are
// set afterwards, so edit leaves them alone. Each test makes its own.
func MustCatalog(tb testing.TB, db *store.DB, edit func(c *Catalog)) *Catalog {
	tb.Helper()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	name := nextName("event")
	price := int64(15000)
	c := &Catalog{
		Event: store.Event{Reference: name, Name: name, Slug: name, Timezone: "Africa/Accra", Published: true,
			CreatedAt: now, UpdatedAt: now},
		Date: store.EventDate{Reference: name + "-date", StartAt: now.Add(24 * time.Hour), EndAt: now.Add(27 * time.Hour),
			Online: true, Active: true, CreatedAt: now, UpdatedAt: now},
		Ticket: store.Ticket{Reference: name + "-ticket", Name: "Regular", Price: &price, Currency: "GHS",
			CreatedAt: now, UpdatedAt: now},
	}
	if edit != nil {
		edit(c)
	}
	if _, err := db.NewInsert().Model(&c.Event).Returning("id").Exec(ctx); err != nil {
		tb.Fatalf("storetest: insert event: %v", err)
	}
	c.Date.EventID = c.Event.ID
	if _, err := db.NewInsert().Model(&c.Date).Returning("id").Exec(ctx); err != nil {
		tb.Fatalf("storetest: insert event date: %v", err)
	}
	c.Ticket.EventDateID = c.Date.ID
	if _, err := db.NewInsert().Model(&c.Ticket).Returning("id").Exec(ctx); err != nil {
		tb.Fatalf("storetest: insert ticket: %v", err)
	}
	return c
}

// MustApp stores an active account and an active app of it.
func MustApp(tb testing.TB, db *store.DB) *store.App {
	tb.Helper()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	name := nextName("app")
	acc := &store.Account{Name: name, Email: name + "@example.com", Status: store.AccountActive, CreatedAt: now, UpdatedAt: now}
	if err := store.InsertAccount(ctx, db, acc); err != nil {
		tb.Fatalf("storetest: insert account: %v", err)
	}
	app := &store.App{AccountID: acc.ID, Name: name, Status: store.AppActive, WebhookSecret: "whsec_" + name,
		CreatedAt: now, UpdatedAt: now}
	if err := store.InsertApp(ctx, db, app); err != nil {
		tb.Fatalf("storetest: insert app: %v", err)
	}
	return app
}

// MustOrder stores a live paid order of app for one of c's ticket, as a
// settled checkout leaves it, with reference ref.
func MustOrder(tb testing.TB, db *store.DB, app *store.App, c *Catalog, ref string) *store.Order {
	tb.Helper()
	now := time.Now().UTC().Truncate(time.Second)
	o := &store.Order{
		Reference: ref, AppID: app.ID, Environment: store.EnvLive, Status: store.OrderPaid,
		EventID: c.Event.ID, EventDateID: c.Date.ID, Currency: c.Ticket.Currency, TotalAmount: *c.Ticket.Price,
		RequiresPayment: true, CustomerName: "Ama Mensah", CustomerEmail: "ama@example.com", CustomerPhone: "+233241234567",
		SuccessURL: "https://shop.example/ok", CancelURL: "https://shop.example/cancel",
		TicketsEmailStatus: store.TicketsEmailQueued, CreatedAt: now, UpdatedAt: now,
	}
	items := []store.OrderItem{{TicketID: c.Ticket.ID, Name: c.Ticket.Name, Quantity: 1, UnitPrice: *c.Ticket.Price}}
	if err := store.InsertOrder(context.Background(), db, o, items); err != nil {
		tb.Fatalf("storetest: insert order: %v", err)
	}
	return o
}
