package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkCompression is the CPU Compress adds to one answer: a REST
// events page of 20 events (per_page's default), about 7 KB of JSON,
// gzipped for a client that accepts it, and as is. docs/benchmarks.md
// keeps the figures: go test -run '^$' -bench Compression ./server/
func BenchmarkCompression(b *testing.B) {
	type event struct {
		ID          int64  `json:"id"`
		Name        string `json:"name"`
		Slug        string `json:"slug"`
		Description string `json:"description"`
		StartsAt    string `json:"starts_at"`
		Venue       string `json:"venue"`
		MinPrice    string `json:"min_price"`
		Currency    string `json:"currency"`
		Available   bool   `json:"available"`
	}
	var events []event
	for i := range 20 {
		events = append(events, event{ID: int64(i + 1), Name: fmt.Sprintf("Highlife Night %d", i), Slug: fmt.Sprintf("highlife-night-%d", i),
			Description: "An evening of highlife classics and new bands at the Conference Centre, with food stalls and a dance floor open until late.",
			StartsAt:    "2026-12-05T19:00:00Z", Venue: "Accra International Conference Centre", MinPrice: "150.00", Currency: "GHS", Available: true})
	}
	page, err := json.Marshal(map[string]any{"data": events, "meta": map[string]any{"page": 1, "per_page": 20, "total": 240}})
	if err != nil {
		b.Fatal(err)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(page)
	})
	for _, tc := range []struct {
		name     string
		handler  http.Handler
		encoding string
	}{
		{"Plain", h, ""},
		{"Gzip", Compress(h), "gzip, br"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, "/api/v1/events", nil)
			if tc.encoding != "" {
				req.Header.Set("Accept-Encoding", tc.encoding)
			}
			var sent bytes.Buffer
			b.ReportAllocs()
			b.SetBytes(int64(len(page)))
			for b.Loop() {
				rec := httptest.NewRecorder()
				tc.handler.ServeHTTP(rec, req)
				sent = *rec.Body
			}
			b.ReportMetric(float64(sent.Len()), "bytes-sent/op")
		})
	}
}
