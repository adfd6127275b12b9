package catalog_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"
)

const sampleFile = `{
  "venues": [{"reference": "accra-arena", "name": "Accra Arena", "slug": "accra-arena",
     "street": "1 Liberation Rd", "city": "Accra", "state": "Greater Accra", "lat": 5.6037, "lng": -0.1870}],
  "events": [{
      "reference": "EVT-1001", "name": "Highlife Night", "slug": "highlife-night",
      "description": "…", "image_url": "https://img.example/1.jpg", "timezone": "Africa/Accra",
      "published": true, "hidden_from_listings": false, "private": false, "password_protected": false,
      "ussd_code": "33", "ussd_full_code": "*713*33#", "sales_start": null, "sales_end": null,
      "dates": [{
          "reference": "DATE-1001-1", "start": "2026-12-24T18:00:00Z", "end": "2026-12-25T02:00:00Z",
          "online": false, "venue": "accra-arena", "active": true, "payout_locked": false,
          "tickets": [{"reference": "TKT-1001-REG", "name": "Regular", "description": null,
             "free": false, "price": "150.00", "promotional_price": "120.00",
             "quantity": 500, "sold": 0, "tickets_per_attendee": 10,
             "sales_start": null, "sales_end": null, "currency": "GHS"}]
      }]
  }]
}`

func mustParse(t *testing.T, s string) *catalog.File {
	t.Helper()
	f, err := catalog.ParseFile(strings.NewReader(s))
	require.NoError(t, err)
	return f
}

func countRows(t *testing.T, db *store.DB, table string) int {
	t.Helper()
	n, err := db.NewSelect().TableExpr(table).Count(context.Background())
	require.NoError(t, err)
	return int(n)
}

func TestImport(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		t0 := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)

		res, err := catalog.Import(ctx, db, mustParse(t, sampleFile), t0)
		require.NoError(t, err)
		require.Len(t, res.Venues, 1)
		require.Len(t, res.Tickets, 1)
		tid := res.Tickets["TKT-1001-REG"]

		t.Run("SameFileChangesNothing", func(t *testing.T) {
			res2, err := catalog.Import(ctx, db, mustParse(t, sampleFile), t0.Add(time.Hour))
			require.NoError(t, err)
			require.Equal(t, []map[string]int64{res.Venues, res.Events, res.EventDates, res.Tickets},
				[]map[string]int64{res2.Venues, res2.Events, res2.EventDates, res2.Tickets})
			require.True(t, res2.NothingChanged)
			var e store.Event
			require.NoError(t, db.NewSelect().Model(&e).Where("reference = ?", "EVT-1001").Scan(ctx))
			require.True(t, e.UpdatedAt.Equal(t0), "updated_at moved to %v", e.UpdatedAt)
			var tk store.Ticket
			require.NoError(t, db.NewSelect().Model(&tk).Where("id = ?", tid).Scan(ctx))
			require.True(t, tk.UpdatedAt.Equal(t0))
		})

		t.Run("EditedFileUpdatesInPlace", func(t *testing.T) {
			edited := strings.Replace(sampleFile, `"price": "150.00"`, `"price": "175.50"`, 1)
			res3, err := catalog.Import(ctx, db, mustParse(t, edited), t0.Add(2*time.Hour))
			require.NoError(t, err)
			require.Equal(t, tid, res3.Tickets["TKT-1001-REG"])
			var tk store.Ticket
			require.NoError(t, db.NewSelect().Model(&tk).Where("id = ?", tid).Scan(ctx))
			require.Equal(t, int64(17550), *tk.Price)
			require.True(t, tk.UpdatedAt.Equal(t0.Add(2*time.Hour)))
			require.Equal(t, 1, countRows(t, db, "tickets"))
		})

		t.Run("ErrBadFileWritesNothing", func(t *testing.T) {
			bad := strings.Replace(sampleFile, `"price": "150.00"`, `"price": "cheap"`, 1)
			bad = strings.Replace(bad, `"reference": "EVT-1001"`, `"reference": "EVT-2002"`, 1)
			_, err := catalog.Import(ctx, db, mustParse(t, bad), t0)
			var fe *catalog.FileError
			require.ErrorAs(t, err, &fe)
			require.Contains(t, err.Error(), `ticket "TKT-1001-REG": price: "cheap"`)
			require.Equal(t, 1, countRows(t, db, "events"))
		})

		t.Run("ErrUnknownVenueRollsBack", func(t *testing.T) {
			bad := strings.Replace(sampleFile, `"venue": "accra-arena"`, `"venue": "nowhere"`, 1)
			bad = strings.Replace(bad, `"name": "Accra Arena"`, `"name": "Renamed Arena"`, 1)
			_, err := catalog.Import(ctx, db, mustParse(t, bad), t0)
			require.ErrorContains(t, err, `date "DATE-1001-1": venue: "nowhere" is neither in the file nor an existing venue`)
			var v store.Venue
			require.NoError(t, db.NewSelect().Model(&v).Where("reference = ?", "accra-arena").Scan(ctx))
			require.Equal(t, "Accra Arena", v.Name, "the venue rename must be rolled back")
		})

		t.Run("ErrQuantityBelowSold", func(t *testing.T) {
			_, err := db.NewUpdate().Model((*store.Ticket)(nil)).Set("sold = 400").Where("id = ?", tid).Exec(ctx)
			require.NoError(t, err)
			bad := strings.Replace(sampleFile, `"quantity": 500`, `"quantity": 300`, 1)
			_, err = catalog.Import(ctx, db, mustParse(t, bad), t0)
			require.ErrorContains(t, err, `ticket "TKT-1001-REG": quantity: 300 is less than the 400 tickets already sold or held`)
		})
	})
}

func TestValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, from, to, want string
	}{
		{"ErrTimezone", `"timezone": "Africa/Accra"`, `"timezone": "Mars/Olympus"`, `event "EVT-1001": timezone: "Mars/Olympus" is not an IANA timezone`},
		{"ErrStart", `"start": "2026-12-24T18:00:00Z"`, `"start": "24/12/2026"`, `date "DATE-1001-1": start: "24/12/2026" is not an RFC 3339 time`},
		{"ErrEndBeforeStart", `"end": "2026-12-25T02:00:00Z"`, `"end": "2026-12-24T17:00:00Z"`, `date "DATE-1001-1": end: must be after start`},
		{"ErrCurrency", `"currency": "GHS"`, `"currency": "CEDI"`, `ticket "TKT-1001-REG": currency: "CEDI" is not an ISO 4217`},
		{"ErrSoldOverQuantity", `"sold": 0`, `"sold": 501`, `ticket "TKT-1001-REG": sold: 501 is more than the quantity 500`},
		{"ErrMissingName", `"name": "Highlife Night"`, `"name": ""`, `event "EVT-1001": name: is required`},
		{"ErrImageURL", `"image_url": "https://img.example/1.jpg"`, `"image_url": "img.jpg"`, `event "EVT-1001": image_url: "img.jpg" is not an absolute http(s) URL`},
		{"ErrPerAttendee", `"tickets_per_attendee": 10`, `"tickets_per_attendee": 0`, `ticket "TKT-1001-REG": tickets_per_attendee: must be at least 1`},
		{"ErrLat", `"lat": 5.6037`, `"lat": 95`, `venue "accra-arena": lat: must be between -90 and 90`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Contains(t, sampleFile, tt.from)
			err := mustParse(t, strings.Replace(sampleFile, tt.from, tt.to, 1)).Validate()
			require.ErrorContains(t, err, tt.want)
		})
	}
	t.Run("ErrDuplicateReference", func(t *testing.T) {
		f := mustParse(t, sampleFile)
		f.Venues = append(f.Venues, f.Venues[0])
		require.ErrorContains(t, f.Validate(), `venue "accra-arena": reference: appears more than once`)
	})
	t.Run("OK", func(t *testing.T) {
		require.NoError(t, mustParse(t, sampleFile).Validate())
	})
}

// stockFile is the fixture of the live-stock tests: one date with tickets
// TKT-A and TKT-B, both named name with this quantity and 5 seeded as sold.
// Changing name makes an import rewrite both ticket rows.
func stockFile(name string, quantity int64) string {
	ticket := func(ref string) string {
		return fmt.Sprintf(`{"reference": %q, "name": %q, "price": "50.00", "quantity": %d, "sold": 5, "currency": "GHS"}`,
			ref, name, quantity)
	}
	return `{"events": [{"reference": "EVT-S", "name": "Stock Night", "slug": "stock-night", "published": true,
	  "dates": [{"reference": "DATE-S", "start": "2026-12-24T18:00:00Z", "end": "2026-12-25T02:00:00Z", "online": true,
	    "tickets": [` + ticket("TKT-A") + `, ` + ticket("TKT-B") + `]}]}]}`
}

// stockBundle is what each live-stock subtest starts from: the fixture
// imported into a fresh database reached through two handles, as the
// importer and the checkout service would reach it.
type stockBundle struct {
	imports  *store.DB // the handle catalog.Import uses
	checkout *store.DB // the handle holds are taken through
	tickets  []int64   // TKT-A, TKT-B
	t0       time.Time
}

func setupStock(t *testing.T, kind string) *stockBundle {
	t.Helper()
	url := storetest.MigratedURL(t, kind)
	b := &stockBundle{imports: storetest.OpenURL(t, url), t0: time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)}
	b.checkout = b.imports
	if kind == "postgres" {
		// A second pool, so holds run beside an import's transaction. SQLite
		// has one writer whatever the handle: a second one only waits.
		b.checkout = storetest.OpenURL(t, url)
	}
	res, err := catalog.Import(context.Background(), b.imports, mustParse(t, stockFile("Regular", 1000)), b.t0)
	require.NoError(t, err)
	b.tickets = []int64{res.Tickets["TKT-A"], res.Tickets["TKT-B"]}
	return b
}

// hold takes qty of a ticket the way a live paid checkout does: one
// conditional UPDATE inside the order's transaction.
func (b *stockBundle) hold(ctx context.Context, ticketID, qty int64) (bool, error) {
	var ok bool
	err := b.checkout.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var err error
		ok, err = store.HoldStock(ctx, tx, ticketID, qty, false, b.t0)
		return err
	})
	return ok, err
}

func (b *stockBundle) ticket(t *testing.T, id int64) store.Ticket {
	t.Helper()
	var tk store.Ticket
	require.NoError(t, b.imports.NewSelect().Model(&tk).Where("id = ?", id).Scan(context.Background()))
	return tk
}

// afterTicketRead runs fn once, right after the import has read the
// tickets of its file and before it writes them.
type afterTicketRead struct {
	once sync.Once
	fn   func()
}

func (h *afterTicketRead) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	return ctx
}

func (h *afterTicketRead) AfterQuery(_ context.Context, e *bun.QueryEvent) {
	if strings.HasPrefix(e.Query, "SELECT") && strings.Contains(e.Query, `FROM "tickets"`) && strings.Contains(e.Query, "reference IN") {
		h.once.Do(h.fn)
	}
}

// TestImportLiveStock checks that imports never write sold or held: holds
// taken while an import runs all survive it, and the quantity rule is
// checked against the stock at write time.
func TestImportLiveStock(t *testing.T) {
	t.Parallel()
	for _, kind := range storetest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()

			t.Run("HoldsRacingImportsKept", func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				b := setupStock(t, kind)
				names := []string{"Regular", "Regular (renamed)"}
				files := make([]*catalog.File, 2)
				for i, name := range names {
					files[i] = mustParse(t, stockFile(name, 1000))
				}

				const holders, holdsEach, minImports = 4, 25, 10
				var (
					wg          sync.WaitGroup
					held        [2]atomic.Int64
					holdersLeft atomic.Int64
					imports     int
					holdErr     = make(chan error, holders)
					importErr   error
				)
				holdersLeft.Store(holders)
				for h := range holders {
					wg.Go(func() {
						defer holdersLeft.Add(-1)
						for i := range holdsEach {
							k := (h + i) % 2
							ok, err := b.hold(ctx, b.tickets[k], 1)
							if err != nil || !ok {
								holdErr <- fmt.Errorf("hold %d of holder %d: ok=%v err=%v", i, h, ok, err)
								return
							}
							held[k].Add(1)
						}
					})
				}
				wg.Go(func() {
					// Import an edited file over and over for as long as holds run.
					for ; imports < minImports || holdersLeft.Load() > 0; imports++ {
						if _, err := catalog.Import(ctx, b.imports, files[imports%2], b.t0.Add(time.Duration(imports+1)*time.Minute)); err != nil {
							importErr = err
							return
						}
					}
				})
				wg.Wait()
				close(holdErr)
				for err := range holdErr {
					require.NoError(t, err)
				}
				require.NoError(t, importErr)
				t.Logf("%d imports of an edited file ran beside %d holds", imports, holders*holdsEach)

				require.Equal(t, int64(holders*holdsEach), held[0].Load()+held[1].Load())
				for k, id := range b.tickets {
					tk := b.ticket(t, id)
					require.Equal(t, names[(imports-1)%2], tk.Name, "the last of %d imports rewrote ticket %d", imports, k)
					require.Equal(t, int64(5), tk.Sold, "ticket %d: sold", k)
					require.Equal(t, held[k].Load(), tk.Held, "ticket %d: held is every hold taken", k)
					require.Equal(t, 1000-5-held[k].Load(), catalog.Available(tk.Stock()), "ticket %d: quantity_available", k)
				}
			})

			t.Run("SameFileAfterHoldsWritesNothing", func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				b := setupStock(t, kind)
				ok, err := b.hold(ctx, b.tickets[0], 7)
				require.NoError(t, err)
				require.True(t, ok)

				_, err = catalog.Import(ctx, b.imports, mustParse(t, stockFile("Regular", 1000)), b.t0.Add(time.Hour))
				require.NoError(t, err)
				tk := b.ticket(t, b.tickets[0])
				require.Equal(t, int64(7), tk.Held)
				require.True(t, tk.UpdatedAt.Equal(b.t0), "updated_at moved to %v: live counts are not catalog values", tk.UpdatedAt)
			})

			t.Run("ErrQuantityBelowHoldsTakenDuringImport", func(t *testing.T) {
				if kind != "postgres" {
					t.Skip("SQLite has one writer: no hold can come between an import's read and its write")
				}
				t.Parallel()
				ctx := context.Background()
				b := setupStock(t, kind)
				// Both tickets are read with 5 sold and nothing held; 400 of
				// each are held before the import writes its quantity of 300.
				var holdErrs []error
				b.imports.AddQueryHook(&afterTicketRead{fn: func() {
					for _, id := range b.tickets {
						ok, err := b.hold(ctx, id, 400)
						if err == nil && !ok {
							err = fmt.Errorf("ticket %d: hold refused", id)
						}
						holdErrs = append(holdErrs, err)
					}
				}})

				_, err := catalog.Import(ctx, b.imports, mustParse(t, stockFile("Regular (renamed)", 300)), b.t0.Add(time.Hour))
				require.Equal(t, []error{nil, nil}, holdErrs, "the holds ran between the import's read and its write")
				var fe *catalog.FileError
				require.ErrorAs(t, err, &fe)
				require.Equal(t, []string{
					`ticket "TKT-A": quantity: 300 is less than the 405 tickets already sold or held (line 3)`,
					`ticket "TKT-B": quantity: 300 is less than the 405 tickets already sold or held (line 3)`,
				}, fe.Problems)
				for _, id := range b.tickets {
					tk := b.ticket(t, id)
					require.Equal(t, "Regular", tk.Name, "the whole file is refused")
					require.Equal(t, int64(1000), *tk.Quantity)
					require.Equal(t, int64(400), tk.Held)
					require.Equal(t, int64(1000-5-400), catalog.Available(tk.Stock()))
				}
			})
		})
	}
}
