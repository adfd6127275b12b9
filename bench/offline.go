package main

// offline.go: the offline door (spec/offline-door.md) — a device
// downloading a date's manifest, keeping it current with since while the
// door scans, and uploading a queue of 500 scans as one batch.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"
)

// The offline door's targets (issue 43, item 5): the manifest of a date of
// 50,000 tickets downloads in under 5 s, a sync with since takes under
// 100 ms, a batch of 500 scans is processed in under 2 s.
const (
	targetManifest = 5 * time.Second
	targetSync     = 100 * time.Millisecond
	targetBatch    = 2 * time.Second
)

// offlineSyncs syncs are timed per round, each after offlineSyncScans
// scans at the door; batchSize is the largest batch.
const (
	offlineSyncs     = 40
	offlineSyncScans = 20
	batchSize        = 500
)

// offlineRun is one round of the offline door.
type offlineRun struct {
	tickets, pages   int
	download         time.Duration
	syncP50, syncP99 time.Duration
	batch            time.Duration
	// relisted is the most tickets one sync listed: the scans' tickets,
	// and those a transaction still running anywhere on the server keeps
	// listing again (at least once).
	relisted int
}

// doorDate is the id of the door's date, whose tickets the door scans.
func doorDate(sd *seeded) int64 { return sd.ids.EventDates[refDoorEvent+"-D1"] }

// offlineRound downloads the date's whole manifest, then times syncs from
// its next_since (each read until caught up, as a door does), each after
// a few scans have changed tickets, then
// sends one batch of batchSize scans (each its own key, made 10 minutes
// ago, as a device's queue after an outage).
func offlineRound(base string, sc *scanner, dateID int64) (offlineRun, error) {
	var r offlineRun
	start := time.Now()
	since := ""
	for {
		page, err := manifestPage(base, sc.key, dateID, since)
		if err != nil {
			return r, err
		}
		r.tickets += len(page.Data)
		r.pages++
		since = page.Meta.NextSince
		if !page.Meta.HasMore {
			break
		}
	}
	r.download = time.Since(start)
	if r.tickets < doorTickets {
		return r, fmt.Errorf("manifest: %d tickets, want %d", r.tickets, doorTickets)
	}
	scan := sc.endpoint(base)
	syncs := make([]time.Duration, 0, offlineSyncs)
	for range offlineSyncs {
		for range offlineSyncScans {
			if _, err := checkOnce(scan); err != nil {
				return r, fmt.Errorf("check-in: %w", err)
			}
		}
		t0 := time.Now()
		listed := 0
		for {
			page, err := manifestPage(base, sc.key, dateID, since)
			if err != nil {
				return r, err
			}
			listed += len(page.Data)
			since = page.Meta.NextSince
			if !page.Meta.HasMore {
				break
			}
		}
		syncs = append(syncs, time.Since(t0))
		if listed < offlineSyncScans/2 {
			return r, fmt.Errorf("manifest sync after %d scans listed %d tickets", offlineSyncScans, listed)
		}
		r.relisted = max(r.relisted, listed)
	}
	slices.Sort(syncs)
	r.syncP50, r.syncP99 = syncs[len(syncs)/2], syncs[len(syncs)*99/100]

	scans := make([]map[string]any, batchSize)
	at := time.Now().UTC().Add(-10 * time.Minute)
	for i := range scans {
		n := sc.n.Add(1) - 1
		c := sc.codes[n%int64(len(sc.codes))]
		scans[i] = map[string]any{"code": c.code, "eventdate_id": c.date, "gate": "North",
			"scanned_at":      at.Add(time.Duration(i) * time.Millisecond).Format(time.RFC3339Nano),
			"idempotency_key": fmt.Sprintf("batch-%d-%d", sc.run, n)}
	}
	body, _ := json.Marshal(map[string]any{"scans": scans})
	req, _ := http.NewRequest(http.MethodPost, base+"/api/v1/check-ins/batch", bytes.NewReader(body))
	req.Header = header("X-API-Key", sc.key, "Content-Type", "application/json")
	t0 := time.Now()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return r, err
	}
	raw, err := io.ReadAll(res.Body)
	res.Body.Close()
	r.batch = time.Since(t0)
	if err != nil || res.StatusCode != http.StatusOK {
		return r, fmt.Errorf("batch: %d %v %.300s", res.StatusCode, err, raw)
	}
	var out struct{ Data []map[string]any }
	if err := json.Unmarshal(raw, &out); err != nil || len(out.Data) != batchSize {
		return r, fmt.Errorf("batch: %d results, want %d: %.300s", len(out.Data), batchSize, raw)
	}
	for _, d := range out.Data {
		if d["error"] != nil {
			return r, fmt.Errorf("batch: a scan refused: %v", d["error"])
		}
	}
	return r, nil
}

type manifestAnswer struct {
	Data []json.RawMessage `json:"data"`
	Meta struct {
		NextSince string `json:"next_since"`
		HasMore   bool   `json:"has_more"`
	} `json:"meta"`
}

// manifestPage reads one page of the date's manifest from since.
func manifestPage(base, key string, dateID int64, since string) (*manifestAnswer, error) {
	q := url.Values{"eventdate_id": {strconv.FormatInt(dateID, 10)}}
	if since != "" {
		q.Set("since", since)
	}
	req, _ := http.NewRequest(http.MethodGet, base+"/api/v1/check-ins/manifest?"+q.Encode(), nil)
	req.Header = header("X-API-Key", key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("manifest: %d %v %.300s", res.StatusCode, err, raw)
	}
	out := new(manifestAnswer)
	if err := json.Unmarshal(raw, out); err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	return out, nil
}
