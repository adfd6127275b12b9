package store

import (
	"context"
	"database/sql"
	"strconv"
	"time"

	"github.com/uptrace/bun"
)

// Ticket is a ticket type of one event date, with its price and stock.
// Money is in minor units of Currency; Quantity nil means unlimited stock.
type Ticket struct {
	bun.BaseModel `bun:"table:tickets,alias:t"`

	ID                 int64     `bun:"id,pk,autoincrement"`
	Reference          string    `bun:"reference,notnull"`
	EventDateID        int64     `bun:"event_date_id,notnull"`
	Name               string    `bun:"name,notnull"`
	Description        *string   `bun:"description"`
	Free               bool      `bun:"free,notnull"`
	Price              *int64    `bun:"price"`
	PromotionalPrice   *int64    `bun:"promotional_price"`
	Quantity           *int64    `bun:"quantity"`
	Sold               int64     `bun:"sold,notnull"`
	Held               int64     `bun:"held,notnull"`
	TicketsPerAttendee *int64    `bun:"tickets_per_attendee"`
	SalesStart         time.Time `bun:"sales_start,nullzero"`
	SalesEnd           time.Time `bun:"sales_end,nullzero"`
	Currency           string    `bun:"currency,notnull"`
	// DateCancelled is set when its date is cancelled: no more is sold.
	DateCancelled bool      `bun:"date_cancelled,notnull"`
	CreatedAt     time.Time `bun:"created_at,notnull"`
	UpdatedAt     time.Time `bun:"updated_at,notnull"`
}

// ticketCatalogColumns are the columns a catalog import writes to an
// existing ticket: all but id, created_at and the live counts sold and
// held, which only checkout and settlement move.
var ticketCatalogColumns = []string{
	"reference", "event_date_id", "name", "description", "free", "price", "promotional_price",
	"quantity", "tickets_per_attendee", "sales_start", "sales_end", "currency", "updated_at",
}

// UpdateTicketCatalog writes t's catalog columns, never sold or held, only
// if t's quantity is not below the row's sold + held at write time. It
// reports false, changing nothing, when the quantity is below them: one
// conditional UPDATE, so an import racing live holds neither erases them
// nor undercuts them.
func UpdateTicketCatalog(ctx context.Context, db bun.IDB, t *Ticket) (bool, error) {
	q := db.NewUpdate().Model(t).Column(ticketCatalogColumns...).WherePK()
	if t.Quantity != nil {
		// The new quantity must cover what is sold and held: room for
		// zero more.
		q = q.Where(stockFits, *t.Quantity, *t.Quantity, 0)
	}
	res, err := q.Exec(ctx)
	if err != nil {
		return false, translate(err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// TicketsOfDates returns the tickets of these event dates, ordered by date and id.
func TicketsOfDates(ctx context.Context, db bun.IDB, dateIDs []int64) ([]Ticket, error) {
	ts := []Ticket{}
	if len(dateIDs) == 0 {
		return ts, nil
	}
	err := db.NewSelect().Model(&ts).
		Where("t.event_date_id IN (?)", bun.List(dateIDs)).
		Order("t.event_date_id", "t.id").
		Scan(ctx)
	return ts, translate(err)
}

// TicketsByReferences returns the tickets with these references.
func TicketsByReferences(ctx context.Context, db bun.IDB, refs []string) ([]Ticket, error) {
	var ts []Ticket
	if len(refs) == 0 {
		return ts, nil
	}
	err := db.NewSelect().Model(&ts).Where("reference IN (?)", bun.List(refs)).Scan(ctx)
	return ts, translate(err)
}

// PricesOfDates returns the pricing columns of the tickets of these dates
// (id, event_date_id, free, price, promotional_price) — what an event's
// pricing summary needs, without scanning whole rows.
func PricesOfDates(ctx context.Context, db bun.IDB, dateIDs []int64) ([]Ticket, error) {
	ts := []Ticket{}
	if len(dateIDs) == 0 {
		return ts, nil
	}
	err := db.NewSelect().Model(&ts).
		Column("id", "event_date_id", "free", "price", "promotional_price").
		Where("t.event_date_id IN (?)", bun.List(dateIDs)).
		Scan(ctx)
	return ts, translate(err)
}

// Stock is the live stock of one ticket, what its availability is made
// of. It is comparable: two reads are equal when the stock did not move.
type Stock struct {
	ID          int64
	EventDateID int64
	Quantity    sql.NullInt64 // not valid: unlimited
	Sold, Held  int64
	// Cancelled is set when the date was cancelled: none is available.
	Cancelled bool
}

// Stock returns the stock columns of t.
func (t *Ticket) Stock() Stock {
	s := Stock{ID: t.ID, EventDateID: t.EventDateID, Sold: t.Sold, Held: t.Held, Cancelled: t.DateCancelled}
	if t.Quantity != nil {
		s.Quantity = sql.NullInt64{Int64: *t.Quantity, Valid: true}
	}
	return s
}

// Statements behind StockOfDates, with the date ids bound as one
// parameter: one text whatever the dates, prepared once per PostgreSQL
// connection. SQLite has no arrays; it reads the ids from a JSON array.
const (
	stockOfDatesPG = `SELECT id, event_date_id, quantity, sold, held, date_cancelled FROM tickets
		WHERE event_date_id = ANY($1) ORDER BY event_date_id, id`
	stockOfDatesSQLite = `SELECT id, event_date_id, quantity, sold, held, date_cancelled FROM tickets
		WHERE event_date_id IN (SELECT value FROM json_each($1)) ORDER BY event_date_id, id`
)

// StockOfDates returns the stock of the tickets of these dates, ordered
// like TicketsOfDates: live availability for tickets whose other fields a
// reader already has. Every catalog read makes it, so the rows are scanned
// by hand into a slice sized for four tickets a date rather than by
// reflection into whole Tickets.
func StockOfDates(ctx context.Context, db *DB, dateIDs []int64) ([]Stock, error) {
	out := make([]Stock, 0, 4*len(dateIDs))
	if len(dateIDs) == 0 {
		return out, nil
	}
	query, ids := stockOfDatesPG, any(dateIDs)
	if !db.Postgres() {
		query, ids = stockOfDatesSQLite, jsonIDs(dateIDs)
	}
	// Each row is scanned in place, through one destination list: a Stock
	// and a list per row were two thirds of its allocations (pprof).
	var dest [6]any
	err := db.queryBound(ctx, query, []any{ids}, func(r row) error {
		out = append(out, Stock{})
		s := &out[len(out)-1]
		dest = [6]any{&s.ID, &s.EventDateID, &s.Quantity, &s.Sold, &s.Held, &s.Cancelled}
		return r.Scan(dest[:]...)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// jsonIDs writes ids as a JSON array.
func jsonIDs(ids []int64) string {
	b := make([]byte, 0, 8*len(ids)+2)
	b = append(b, '[')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, id, 10)
	}
	return string(append(b, ']'))
}

// TicketsByIDs returns the tickets with these ids, ordered by id.
func TicketsByIDs(ctx context.Context, db bun.IDB, ids []int64) ([]Ticket, error) {
	ts := []Ticket{}
	if len(ids) == 0 {
		return ts, nil
	}
	err := db.NewSelect().Model(&ts).Where("t.id IN (?)", bun.List(ids)).Order("t.id").Scan(ctx)
	return ts, translate(err)
}

// stockFits is the stock rule in SQL, the twin of catalog.Fits: n more
// units fit a ticket whose quantity is q (NULL: unlimited) and whose row
// has sold and held when q − sold − held is at least n. Its arguments are
// q, q and n; q is the quantity column, or a quantity about to replace it.
// catalog's TestStockRule runs the same cases through both.
const stockFits = "(? IS NULL OR ? - sold - held >= ?)"

// HoldStock moves qty of a ticket into held, or into sold when sell is
// true, only if that much is available. It reports false, changing nothing,
// when it is not: one conditional UPDATE, so concurrent checkouts can never
// oversell.
func HoldStock(ctx context.Context, db bun.IDB, ticketID, qty int64, sell bool, now time.Time) (bool, error) {
	col := "held"
	if sell {
		col = "sold"
	}
	res, err := db.NewUpdate().Model((*Ticket)(nil)).
		Set("? = ? + ?", bun.Ident(col), bun.Ident(col), qty).
		Set("updated_at = ?", now).
		Where("id = ?", ticketID).
		Where("NOT date_cancelled").
		Where(stockFits, bun.Safe("quantity"), bun.Safe("quantity"), qty).
		Exec(ctx)
	if err != nil {
		return false, translate(err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// SettleStock moves qty of a ticket out of held: into sold when sell is true,
// back to available otherwise.
func SettleStock(ctx context.Context, db bun.IDB, ticketID, qty int64, sell bool, now time.Time) error {
	q := db.NewUpdate().Model((*Ticket)(nil)).Set("held = held - ?", qty).Set("updated_at = ?", now).Where("id = ?", ticketID)
	if sell {
		q = q.Set("sold = sold + ?", qty)
	}
	_, err := q.Exec(ctx)
	return translate(err)
}
