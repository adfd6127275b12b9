package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// TestCatalogCacheFreshness: the catalog cache never serves what a fresh
// read would not. Live availability is read on every request; an import
// by `boxoffice catalog import` (its own database handle, as from another
// process) reaches the server without a restart; and a date that ends
// takes its event out of the listing with nothing written at all.
func TestCatalogCacheFreshness(t *testing.T) {
	t.Parallel()
	for _, kind := range storetest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			dbURL := storetest.MigratedURL(t, kind)
			clock := newTestClock()
			tb := setup(t, storetest.OpenURL(t, dbURL), withClock(clock))
			tb.catalogWatched(t)
			ids := tb.demo.Catalog
			tickets := fmt.Sprintf("/api/v1/event-dates/%d/tickets", ids.EventDates["DEMO-HIGHLIFE-1"])
			regular := func() float64 {
				res := tb.get(t, tickets, tb.liveKey)
				require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
				for _, tk := range res.Body["data"].([]any) {
					if tk := tk.(map[string]any); tk["id"] == float64(ids.Tickets["DEMO-HIGHLIFE-REG"]) {
						return tk["quantity_available"].(float64)
					}
				}
				t.Fatal("no Regular ticket")
				return 0
			}
			listed := func(q string) []any {
				res := tb.get(t, "/api/v1/events?q="+q, tb.testKey)
				require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
				return res.Body["data"].([]any)
			}

			t.Run("StockIsLive", func(t *testing.T) {
				before := regular()
				require.Equal(t, before, regular(), "a warm read")
				res := tb.checkout(t, tb.liveKey, newIdemKey(), tb.highlife(3))
				require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
				require.Equal(t, before-3, regular(), "the hold shows at once, with the cache warm")
				gql := tb.graphql(t, tb.liveKey, `query($id: Int!) { eventDate(id: $id) { tickets { id quantityAvailable } } }`,
					map[string]any{"id": ids.EventDates["DEMO-HIGHLIFE-1"]})
				require.Contains(t, string(gql.Raw), fmt.Sprintf(`{"id":%d,"quantityAvailable":%d}`, ids.Tickets["DEMO-HIGHLIFE-REG"], int(before-3)))
			})

			t.Run("ImportFromAnotherProcess", func(t *testing.T) {
				require.Empty(t, listed("Lantern"))
				file := filepath.Join(t.TempDir(), "catalog.json")
				start, end := time.Now().Add(48*time.Hour).UTC(), time.Now().Add(50*time.Hour).UTC()
				writeCatalog(t, file, "LANTERN", "Lantern Festival", start, end)
				mustJSON(t, dbURL, "catalog", "import", file, "--json")
				waitFor(t, 10*time.Second, "the imported event to be listed", func() bool { return len(listed("Lantern")) == 1 })

				writeCatalog(t, file, "LANTERN", "Lantern Festival (moved)", start, end)
				mustJSON(t, dbURL, "catalog", "import", file, "--json")
				waitFor(t, 10*time.Second, "the rename to show", func() bool {
					l := listed("Lantern")
					return len(l) == 1 && l[0].(map[string]any)["name"] == "Lantern Festival (moved)"
				})
			})

			t.Run("DateEnds", func(t *testing.T) {
				file := filepath.Join(t.TempDir(), "catalog.json")
				end := clock.Now().Add(time.Hour)
				writeCatalog(t, file, "SOON", "Soon Over", end.Add(-time.Hour), end)
				// Until the import's NOTIFY arrives, reads may keep what they
				// read in the generation from before it, whose end of validity
				// predates the new date; in a deployment that lasts a moment,
				// here the clock jumps an hour within it. So the jump waits
				// for the news, as every server of a deployment gets it.
				tb.changeCatalog(t, func() { mustJSON(t, dbURL, "catalog", "import", file, "--json") })
				waitFor(t, 10*time.Second, "the event to be listed", func() bool { return len(listed("Soon")) == 1 })
				require.Len(t, listed("Soon"), 1, "a warm read")
				clock.Add(time.Hour) // the server's clock reaches the date's end; nothing is written
				require.Empty(t, listed("Soon"), "a date that ended is still listed")
				ev := tb.get(t, "/api/v1/events?q=Soon&include_past=true", tb.testKey).Body["data"].([]any)
				require.Len(t, ev, 1)
				require.Equal(t, 0.0, ev[0].(map[string]any)["active_dates_count"])
			})

			// An events page is kept as the bytes REST answers with, shared by
			// every caller: the same bytes until the catalog changes, then the
			// change, for the listing and for the page's own events.
			t.Run("EncodedPage", func(t *testing.T) {
				const path = "/api/v1/events?per_page=3"
				first := tb.get(t, path, tb.testKey)
				require.Equal(t, http.StatusOK, first.Status, "%s", first.Raw)
				require.Len(t, first.Body["data"], 3)
				// Uncompressed: the kept bytes themselves, and their length.
				again := tb.do(t, http.MethodGet, path, tb.liveKey, nil, "Accept-Encoding", "identity")
				require.Equal(t, string(first.Raw), string(again.Raw), "another caller, the same bytes")
				require.Equal(t, strconv.Itoa(len(first.Raw)), again.Header.Get("Content-Length"))
				id := int64(first.Body["data"].([]any)[0].(map[string]any)["id"].(float64))
				other, err := store.Open(context.Background(), dbURL)
				require.NoError(t, err)
				defer other.Close()
				tb.changeCatalog(t, func() {
					_, err := other.NewUpdate().Model((*store.Event)(nil)).Set("name = ?", "Renamed & <kept>").
						Where("id = ?", id).Exec(context.Background())
					require.NoError(t, err)
				})
				renamed := tb.get(t, path, tb.testKey)
				require.Contains(t, string(renamed.Raw), `"name":"Renamed & <kept>"`, "the change shows, HTML characters as they are")
				require.NotEqual(t, string(first.Raw), string(renamed.Raw))
			})

			t.Run("Hidden", func(t *testing.T) {
				other, err := store.Open(context.Background(), dbURL)
				require.NoError(t, err)
				defer other.Close()
				path := fmt.Sprintf("/api/v1/events/%d", ids.Events["DEMO-HIGHLIFE"])
				require.Equal(t, http.StatusOK, tb.get(t, path, tb.testKey).Status)
				_, err = other.NewUpdate().Model((*store.Event)(nil)).Set("hidden_from_listings = ?", true).
					Where("id = ?", ids.Events["DEMO-HIGHLIFE"]).Exec(context.Background())
				require.NoError(t, err)
				waitFor(t, 10*time.Second, "the hidden event to answer 404", func() bool {
					return tb.get(t, path, tb.testKey).Status == http.StatusNotFound
				})
			})
		})
	}
}

func available(tk store.Ticket) int { return int(catalog.Available(tk.Stock())) }

// writeCatalog writes a catalog file of one published event with one date
// of one paid ticket.
func writeCatalog(t *testing.T, file, ref, name string, start, end time.Time) {
	t.Helper()
	b, err := json.Marshal(map[string]any{"events": []any{map[string]any{
		"reference": ref, "name": name, "slug": "e", "published": true,
		"dates": []any{map[string]any{
			"reference": ref + "-1", "start": start.Format(time.RFC3339Nano), "end": end.Format(time.RFC3339Nano), "online": true, "active": true,
			"tickets": []any{map[string]any{"reference": ref + "-T", "name": "Entry", "price": "10.00", "currency": "GHS"}},
		}},
	}}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(file, b, 0o600))
}

// TestGraphQLResponseCache: a repeated catalog query is answered from its
// last run only while that run's catalog and live stock are unchanged, and
// queries that read anything else run every time.
func TestGraphQLResponseCache(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tb := setup(t, db)
		tb.catalogWatched(t)
		ids := tb.demo.Catalog
		version := 0 // SQLite reads the catalog's version with a statement
		if !db.Postgres() {
			version = 1
		}
		key := keyStatements(db)
		nested := `query($id: Int!) { event(id: $id) { name dates { id venue { name } tickets { id quantityAvailable } } } }`
		vars := map[string]any{"id": ids.Events["DEMO-HIGHLIFE"]}
		run := func(q string, vars map[string]any) (*response, int) {
			tb.queries.Reset()
			res := tb.graphql(t, tb.liveKey, q, vars)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
			require.Nil(t, res.Body["errors"], "%s", res.Raw)
			return res, tb.queries.N()
		}

		first, _ := run(nested, vars)
		second, _ := run(nested, vars) // asked twice: now kept
		again, n := run(nested, vars)
		require.JSONEq(t, string(first.Raw), string(second.Raw))
		require.JSONEq(t, string(first.Raw), string(again.Raw))
		require.Equal(t, 1+key+version, n, "a kept answer costs the live stock of its dates (and the key's check)")

		res := tb.checkout(t, tb.liveKey, newIdemKey(), tb.highlife(2))
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
		after, _ := run(nested, vars)
		require.NotEqual(t, string(first.Raw), string(after.Raw), "stock moved: the query must run again")
		require.Contains(t, string(after.Raw), fmt.Sprintf(`{"id":%d,"quantityAvailable":%d}`,
			ids.Tickets["DEMO-HIGHLIFE-REG"], available(tb.ticket(t, "DEMO-HIGHLIFE-REG"))))

		// No tickets shown: nothing to re-read.
		names := `{ events(perPage: 5) { nodes { name } } }`
		run(names, nil)
		run(names, nil)
		_, n = run(names, nil)
		require.Equal(t, key+version, n)

		// Other variables are another query.
		other, _ := run(nested, map[string]any{"id": ids.Events["DEMO-MOVIES"]})
		require.NotEqual(t, string(first.Raw), string(other.Raw))

		tb.changeCatalog(t, func() {
			_, err := db.NewUpdate().Model((*store.Event)(nil)).Set("name = ?", "Highlife Night (late show)").
				Where("id = ?", ids.Events["DEMO-HIGHLIFE"]).Exec(context.Background())
			require.NoError(t, err)
		})
		renamed, _ := run(nested, vars)
		require.Contains(t, string(renamed.Raw), "Highlife Night (late show)")

		// An order is not the catalog: read every time.
		sess := tb.checkout(t, tb.testKey, newIdemKey(), tb.highlife(1)).data()
		mixed := `query($ref: String!) { events(perPage: 1) { nodes { id } } order(reference: $ref) { status } }`
		status := func() string {
			res := tb.graphql(t, tb.testKey, mixed, map[string]any{"ref": sess["order_reference"]})
			require.Nil(t, res.Body["errors"], "%s", res.Raw)
			return res.Body["data"].(map[string]any)["order"].(map[string]any)["status"].(string)
		}
		require.Equal(t, "PENDING", status())
		require.Equal(t, http.StatusSeeOther, tb.submitOutcome(t, sess["checkout_url"].(string), "paid").StatusCode)
		require.Equal(t, "PAID", status())

		// Errors are not kept.
		missing := `{ event(id: 987654) { name } }`
		for range 2 {
			res := tb.graphql(t, tb.liveKey, missing, nil)
			require.Equal(t, "event_not_found", res.gqlErrorExt(t)["code"], "%s", res.Raw)
		}
	})
}
