package main

// Hot-path micro-benchmarks (testing.B) of the code every catalog request
// and webhook delivery runs: pricing, time formatting, the event summary,
// JSON encoding of a REST page, and webhook signing/verification.
// `make bench` runs them; alone: cd bench && go test -run '^$' -bench . -benchmem .

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/graph/model"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/webhook/verify"
)

func i64(n int64) *int64 { return &n }

// benchTickets is one date's four ticket types, as the bench catalog has them.
func benchTickets(dateID int64) []store.Ticket {
	return []store.Ticket{
		{ID: dateID*10 + 1, EventDateID: dateID, Name: "Regular", Price: i64(15000), Currency: "GHS"},
		{ID: dateID*10 + 2, EventDateID: dateID, Name: "VIP", Price: i64(40000), PromotionalPrice: i64(32000), Quantity: i64(200), Sold: 12, Currency: "GHS"},
		{ID: dateID*10 + 3, EventDateID: dateID, Name: "Free entry", Free: true, Quantity: i64(1000), Currency: "GHS"},
		{ID: dateID*10 + 4, EventDateID: dateID, Name: "Early bird", Price: i64(10000), PromotionalPrice: i64(12000), Quantity: i64(100), Sold: 20, Currency: "GHS"},
	}
}

func BenchmarkEffectivePrice(b *testing.B) {
	ts := benchTickets(1)
	b.ReportAllocs()
	var sink int64
	for i := 0; b.Loop(); i++ {
		sink += catalog.EffectivePrice(&ts[i%len(ts)])
	}
	_ = sink
}

func BenchmarkFormatAmount(b *testing.B) {
	amounts := []int64{0, 5, 15000, 32050, 123456789}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_ = catalog.FormatAmount(amounts[i%len(amounts)])
	}
}

// BenchmarkTicketPricing is the per-ticket work of a tickets answer:
// effective price, availability and the formatted amounts.
func BenchmarkTicketPricing(b *testing.B) {
	ts := benchTickets(1)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		t := &ts[i%len(ts)]
		_ = catalog.FormatAmount(catalog.EffectivePrice(t))
		_ = catalog.Available(t.Stock())
		if t.Price != nil {
			_ = catalog.FormatAmount(*t.Price)
		}
		_ = catalog.CurrencySymbol(t.Currency)
	}
}

func BenchmarkSummarize(b *testing.B) {
	now := time.Now()
	dates := make([]store.EventDate, 3)
	tickets := map[int64][]store.Ticket{}
	for d := range dates {
		id := int64(d + 1)
		dates[d] = store.EventDate{ID: id, StartAt: now.Add(time.Duration(d+1) * 24 * time.Hour),
			EndAt: now.Add(time.Duration(d+1)*24*time.Hour + 4*time.Hour), Active: true}
		tickets[id] = benchTickets(id)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = catalog.Summarize(dates, tickets, now)
	}
}

// BenchmarkZone is the timezone lookup every formatted time needs.
func BenchmarkZone(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = catalog.Zone("Africa/Accra")
	}
}

// BenchmarkFormatTime renders one instant in the API's three forms.
func BenchmarkFormatTime(b *testing.B) {
	loc := catalog.Zone("Africa/Accra")
	t := time.Date(2026, 12, 24, 18, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	for b.Loop() {
		_ = catalog.FormatTime(t, loc)
	}
}

func str(s string) *string { return &s }

// eventsPage is a REST page of n events as GET /api/v1/events builds it.
func eventsPage(n int) any {
	type meta struct {
		Page        int    `json:"page"`
		PerPage     int    `json:"per_page"`
		Total       int    `json:"total"`
		TotalPages  int    `json:"total_pages"`
		HasNext     bool   `json:"has_next"`
		HasPrev     bool   `json:"has_prev"`
		Timezone    string `json:"timezone"`
		IncludePast bool   `json:"include_past"`
	}
	loc := catalog.Zone("Africa/Accra")
	events := make([]*model.Event, n)
	for i := range events {
		start := catalog.FormatTime(time.Date(2026, 12, 1+i%28, 19, 0, 0, 0, time.UTC), loc)
		end := catalog.FormatTime(time.Date(2027, 1, 1+i%28, 23, 0, 0, 0, time.UTC), loc)
		stamp := catalog.FormatStamp(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC))
		events[i] = &model.Event{
			ID: 1000 - i, Reference: fmt.Sprintf("BEV-%04d", 1000-i), Name: fmt.Sprintf("Bench Event %04d", 1000-i),
			Slug:             fmt.Sprintf("bench-event-%04d", 1000-i),
			Description:      str("A generated event of the Boxoffice benchmark catalog, with three dates and four ticket types each."),
			ImageURL:         str(fmt.Sprintf("https://images.bench.example/events/%04d.jpg", 1000-i)),
			ActiveDatesCount: 3, HasMultipleDates: true,
			NextStartdate: &start.Plain, NextStartdateISO: &start.ISO, NextStartdateDisplay: &start.Display,
			LastEnddate: &end.Plain, LastEnddateISO: &end.ISO, LastEnddateDisplay: &end.Display,
			Timezone: "Africa/Accra", CreatedAt: stamp, UpdatedAt: stamp,
			Pricing: &model.PricingSummary{HasFreeTickets: true, HasPaidTickets: true},
		}
	}
	return struct {
		Data []*model.Event `json:"data"`
		Meta meta           `json:"meta"`
	}{events, meta{Page: 1, PerPage: n, Total: 1000, TotalPages: 1000 / n, HasNext: true, Timezone: "Africa/Accra"}}
}

// BenchmarkEncodeEventsPage encodes a page of 100 events the way rest's
// writeJSON does (json.Encoder, no HTML escaping, into a buffer).
func BenchmarkEncodeEventsPage(b *testing.B) {
	page := eventsPage(100)
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(page); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(buf.Len()))
}

// webhookBody is an order.paid delivery of typical size.
var webhookBody = []byte(`{"id":"evt_01JBENCH0000000000000000000","type":"order.paid","created_at":"2026-11-21T20:08:31Z",` +
	`"environment":"test","sequence":1,"data":{"order":{"reference":"sbx_01JBENCH000000000000000000","status":"paid",` +
	`"status_code":2,"currency":"GHS","created_at":"2026-11-21T20:07:02Z","updated_at":"2026-11-21T20:08:31Z",` +
	`"payment_reference":"pay_bench_0001","environment":"test"}}}`)

const webhookSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

func BenchmarkSign(b *testing.B) {
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	b.ReportAllocs()
	b.SetBytes(int64(len(webhookBody)))
	for b.Loop() {
		_ = verify.Sign(webhookSecret, ts, webhookBody)
	}
}

func BenchmarkVerifyAt(b *testing.B) {
	now := time.Now()
	ts := strconv.FormatInt(now.Unix(), 10)
	h := http.Header{}
	h.Set(verify.HeaderTimestamp, ts)
	h.Set(verify.HeaderSignature, verify.Sign(webhookSecret, ts, webhookBody))
	if err := verify.VerifyAt(webhookSecret, h, webhookBody, now); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(webhookBody)))
	for b.Loop() {
		if err := verify.VerifyAt(webhookSecret, h, webhookBody, now); err != nil {
			b.Fatal(err)
		}
	}
}
