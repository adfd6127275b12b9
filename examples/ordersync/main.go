// Command ordersync keeps a copy of a Boxoffice app's orders in step by
// following GET /api/v1/order-changes: it starts from the first order,
// stores meta.next_since after every page (so a restart resumes where it
// stopped and misses nothing), and prints each order as it arrives. It is
// the recipe of docs/api.md, "Keeping in sync", as a program to copy from.
//
//	BOXOFFICE_API_KEY=svc_test_… go run ./examples/ordersync            # follow, polling every 5s
//	BOXOFFICE_API_KEY=svc_test_… go run ./examples/ordersync -once      # catch up, then exit
//
// BOXOFFICE_URL is the service (default http://localhost:8080, what make
// run serves); -state names the file that keeps next_since.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// order is the part of the API's Order this program keeps.
type order struct {
	Reference    string `json:"reference"`
	Status       string `json:"status"`
	UpdatedAt    string `json:"updated_at"`
	TotalAmount  string `json:"total_amount"`
	Currency     string `json:"currency"`
	Tickets      []any  `json:"tickets"`
	TicketsEmail struct {
		Status string `json:"status"`
	} `json:"tickets_email"`
}

type changesPage struct {
	Data []order `json:"data"`
	Meta struct {
		NextSince string `json:"next_since"`
		HasMore   bool   `json:"has_more"`
	} `json:"meta"`
}

type apiError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func main() {
	once := flag.Bool("once", false, "read every change there is, then exit")
	state := flag.String("state", "ordersync.state", "file that keeps next_since between runs")
	interval := flag.Duration("interval", 5*time.Second, "pause between reads once caught up")
	flag.Parse()
	base := os.Getenv("BOXOFFICE_URL")
	if base == "" {
		base = "http://localhost:8080"
	}
	key := os.Getenv("BOXOFFICE_API_KEY")
	if key == "" {
		fmt.Fprintln(os.Stderr, "ordersync: set BOXOFFICE_API_KEY to your app's key (svc_test_… or svc_live_…)")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	s := &syncer{base: strings.TrimRight(base, "/"), key: key, state: *state, client: &http.Client{Timeout: 30 * time.Second},
		copy: map[string]order{}}
	if err := s.run(ctx, *once, *interval); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "ordersync:", err)
		os.Exit(1)
	}
}

// syncer follows the feed into copy, its local copy of the orders (a real
// client keeps them in its database, next to next_since).
type syncer struct {
	base, key, state string
	client           *http.Client
	copy             map[string]order
}

func (s *syncer) run(ctx context.Context, once bool, interval time.Duration) error {
	since, err := os.ReadFile(s.state)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	next := strings.TrimSpace(string(since))
	for {
		page, err := s.read(ctx, next)
		if err != nil {
			return err
		}
		for _, o := range page.Data {
			s.apply(o)
		}
		// Saved after the page is applied: a crash in between reads the
		// page again, and applying an order twice changes nothing.
		if err := save(s.state, page.Meta.NextSince); err != nil {
			return err
		}
		next = page.Meta.NextSince
		if page.Meta.HasMore {
			continue
		}
		if once {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
}

// apply keeps an order from the feed. The feed's copy is always the latest
// (it comes in the order of changes), so it replaces what is kept; an order
// from a webhook would replace it only if its updated_at were later.
func (s *syncer) apply(o order) {
	s.copy[o.Reference] = o
	fmt.Printf("%s %s %s %s tickets=%d email=%s\n", o.Reference, o.Status, o.UpdatedAt,
		o.TotalAmount+" "+o.Currency, len(o.Tickets), o.TicketsEmail.Status)
}

// read asks for the changes after since, waiting out rate limits and
// retrying the service's own failures with backoff.
func (s *syncer) read(ctx context.Context, since string) (*changesPage, error) {
	q := url.Values{"limit": {"100"}}
	if since != "" {
		q.Set("since", since)
	}
	backoff := time.Second
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+"/api/v1/order-changes?"+q.Encode(), nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("X-API-Key", s.key)
		res, err := s.client.Do(req)
		var body []byte
		if err == nil {
			body, err = io.ReadAll(res.Body)
			res.Body.Close()
		}
		wait := backoff
		switch {
		case err != nil: // the network: retry
		case res.StatusCode == http.StatusOK:
			page := new(changesPage)
			return page, json.Unmarshal(body, page)
		case res.StatusCode == http.StatusTooManyRequests:
			if secs, err := strconv.Atoi(res.Header.Get("Retry-After")); err == nil {
				wait = time.Duration(secs) * time.Second
			}
		case res.StatusCode >= 500:
		default: // a refusal retrying cannot fix: a bad key, a damaged state file
			var e apiError
			_ = json.Unmarshal(body, &e)
			return nil, fmt.Errorf("%s: %s (%d)", e.Error.Code, e.Error.Message, res.StatusCode)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		backoff = min(2*backoff, time.Minute)
	}
}

// save writes next_since so that a crash leaves either the old value or
// the new one, never half of one.
func save(path, since string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".ordersync-*")
	if err != nil {
		return err
	}
	if _, err := tmp.WriteString(since + "\n"); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
