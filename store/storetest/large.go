package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/store"
	"github.com/uptrace/bun"
)

// LargeCatalogSQL returns the statements that add a generated catalog of n
// published events to a PostgreSQL database in one transaction, made in
// the database itself (INSERT … SELECT over generate_series), so a million
// events take minutes, not hours: 50 venues in five cities; events created
// a minute apart before base, one in fifty hidden, names from five words
// with the event's number; two dates each (the first of every fourth
// event ended a day before base, the others start within 2,000 hours after
// it, one in ten online); two to four tickets per date (every ninth
// event's all free, one in eleven dates with a zero price, the rest paid).
// The transaction sets boxoffice.catalog_bulk, so listeners hear one
// "anything changed" per statement instead of one notification per event.
// References start with prefix, which must be new to the database.
func LargeCatalogSQL(n int, base time.Time, prefix string) []string {
	ts := "'" + base.UTC().Format(time.RFC3339Nano) + "'::timestamptz"
	return []string{
		`SET LOCAL boxoffice.catalog_bulk = 'on'`,
		fmt.Sprintf(`INSERT INTO venues (reference, name, slug, city, created_at, updated_at)
			SELECT '%[1]s-v' || i, 'Venue ' || i, '%[1]s-v' || i,
				(ARRAY['Accra', 'Kumasi', 'Tamale', 'Cape Coast', 'Ho'])[1 + i %% 5], %[2]s, %[2]s
			FROM generate_series(1, 50) AS i`, prefix, ts),
		fmt.Sprintf(`INSERT INTO events (reference, name, slug, timezone, published, hidden_from_listings, private,
				password_protected, created_at, updated_at)
			SELECT '%[1]s-e' || i, (ARRAY['Jazz', 'Highlife', 'Comedy', 'Food', 'Tech'])[1 + i %% 5] || ' Night ' || i,
				'%[1]s-e' || i, 'Africa/Accra', TRUE, i %% 50 = 0, FALSE, FALSE,
				%[2]s - i * interval '1 minute', %[2]s
			FROM generate_series(1, %[3]d) AS i`, prefix, ts, n),
		fmt.Sprintf(`INSERT INTO event_dates (reference, event_id, start_at, end_at, online, venue_id, active,
				payout_locked, created_at, updated_at)
			SELECT e.reference || '-d' || k, e.id, s.start_at, s.start_at + interval '3 hours', e.id %% 10 = 0,
				v.first + (e.id + k) %% 50, TRUE, FALSE, %[2]s, %[2]s
			FROM events AS e
			CROSS JOIN generate_series(1, 2) AS k
			CROSS JOIN (SELECT min(id) AS first FROM venues WHERE reference LIKE '%[1]s-v%%') AS v
			CROSS JOIN LATERAL (SELECT CASE WHEN k = 1 AND e.id %% 4 = 0 THEN %[2]s - interval '1 day'
				ELSE %[2]s + ((e.id * 7 + k * 13) %% 2000) * interval '1 hour' END AS start_at) AS s
			WHERE e.reference LIKE '%[1]s-e%%'`, prefix, ts),
		fmt.Sprintf(`INSERT INTO tickets (reference, event_date_id, name, free, price, promotional_price, quantity,
				sold, held, currency, created_at, updated_at)
			SELECT d.reference || '-t' || k, d.id, 'Ticket ' || k, d.event_id %% 9 = 0,
				CASE WHEN d.event_id %% 9 = 0 THEN NULL WHEN d.id %% 11 = 0 THEN 0 ELSE 1000 * k END,
				CASE WHEN k = 2 THEN 500 END, 100, 0, 0, 'GHS', %[2]s, %[2]s
			FROM event_dates AS d
			CROSS JOIN LATERAL generate_series(1, 2 + d.id %% 3) AS k
			WHERE d.reference LIKE '%[1]s-e%%'`, prefix, ts),
	}
}

// MustLargeCatalog adds LargeCatalogSQL's catalog of n events to a
// PostgreSQL database and analyzes it, as autovacuum would have.
func MustLargeCatalog(tb testing.TB, db *store.DB, n int, base time.Time) {
	tb.Helper()
	ctx := context.Background()
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		for _, s := range LargeCatalogSQL(n, base, nextName("large")) {
			if _, err := tx.ExecContext(ctx, s); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatalf("storetest: large catalog: %v", err)
	}
	if _, err := db.ExecContext(ctx, "ANALYZE venues, events, event_dates, tickets"); err != nil {
		tb.Fatalf("storetest: analyze: %v", err)
	}
}
