package main

// door.go: scans at the door (POST /api/v1/check-ins with a scanner key)
// while checkout traffic runs on the same server.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// The door's targets (issue 24, item 7): a scan answers in under 20 ms at
// the median and the door holds at least 500 scans/s, while checkouts run.
const (
	targetScanP50  = 20 * time.Millisecond
	targetScanRate = 500
)

// The door's event, and how many tickets it issues: free test carts of
// doorCart tickets, all for its first date, as a date sold out in a flash
// sale. Nothing ANALYZEs issued_tickets after the sale (this machine's
// PostgreSQL runs with autovacuum off, and a new deployment's autoanalyze
// may not have run yet): every scan must reach its ticket by its code
// whatever the planner knows of the date's 50,000 tickets.
const (
	refDoorEvent = "BEV-0003"
	doorTickets  = 50000
	doorCart     = 50
)

// doorCheckoutRate is the checkout traffic beside the door's scans: live
// checkouts spread over the 1,000 events, sent at this rate (open loop) —
// 3,000 a minute, a busy on-sale. (Closed-loop checkout workers would take
// whatever CPU the scans leave, so the scans' figures would only say how
// the machine was shared.)
const doorCheckoutRate = 50

// doorCode is one issued ticket: its code and date.
type doorCode struct {
	code string
	date int64
}

// doorRun is one door run: the scans, and the checkouts beside them.
type doorRun struct {
	scans, checkouts stats
}

// doorResult is every door run, closed loop (capacity) and open loop (at
// the target rate).
type doorResult struct {
	codes        int
	closed, open []doorRun
	// offline are the offline door's rounds (offline.go).
	offline      []offlineRun
	checkoutRate int
}

// makeDoorCodes creates a test scanner key for the door's event and
// issues doorTickets test tickets by free test carts of doorCart (a free
// test checkout is paid at once and issues its tickets), made by a few
// workers at once, then reads their codes from the orders. The codes are
// returned interleaved — every cart's first ticket, then every cart's
// second… — so that scans in a row are of different orders: an admission
// touches its order's row, and a cart's tickets scanned back to back would
// queue on that row lock, which a real queue at the door rarely does.
func makeDoorCodes(ctx context.Context, bin, dbURL, base string, sd *seeded) (*scanner, error) {
	out, err := cli(ctx, bin, dbURL, "scanners", "create", "--event", strconv.FormatInt(sd.ids.Events[refDoorEvent], 10),
		"--env", "test", "--name", "Bench gate", "--json")
	if err != nil {
		return nil, err
	}
	var sc struct {
		Key string `json:"key"`
	}
	if err := json.Unmarshal(out, &sc); err != nil || sc.Key == "" {
		return nil, fmt.Errorf("scanners create --json printed no key: %s", out)
	}
	run := time.Now().UnixNano()
	carts := make([][]doorCode, doorTickets/doorCart)
	errs := make([]error, len(carts))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(carts) || ctx.Err() != nil {
					return
				}
				carts[i], errs[i] = doorCart1(base, sd, fmt.Sprintf("door-%d-%d", run, i), i)
				if errs[i] != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	codes := make([]doorCode, 0, doorTickets)
	for k := range doorCart {
		for _, c := range carts {
			codes = append(codes, c[k])
		}
	}
	return &scanner{key: sc.Key, codes: codes, run: time.Now().UnixNano()}, nil
}

// doorCart1 buys a free test cart of the door's first date and returns its
// tickets.
func doorCart1(base string, sd *seeded, idem string, _ int) ([]doorCode, error) {
	date := refDoorEvent + "-D1"
	req := checkoutRequest(sd, refDoorEvent, date, date+"-FREE", "Door Guest", "door@bench.example")
	req["items"] = []any{map[string]any{"ticket_id": sd.ids.Tickets[date+"-FREE"], "quantity": doorCart}}
	body, _ := json.Marshal(req)
	e := endpoint{name: "door-cart", method: http.MethodPost, want: http.StatusCreated, target: func(_ uint64, t *vegeta.Target) {
		t.URL, t.Body = base+"/api/v1/checkout-sessions", body
		t.Header = header("X-API-Key", sd.testKey, "Content-Type", "application/json", "Idempotency-Key", idem)
	}}
	code, resp, _, err := do(e, 0)
	if err != nil || code != http.StatusCreated {
		return nil, fmt.Errorf("free test cart for the door: %d %v %.300s", code, err, resp)
	}
	var sess struct {
		Data struct {
			Reference string `json:"order_reference"`
		} `json:"data"`
	}
	if err := json.Unmarshal(resp, &sess); err != nil || sess.Data.Reference == "" {
		return nil, fmt.Errorf("free test cart: no order_reference in %.300s", resp)
	}
	get := endpoint{name: "door-order", method: http.MethodGet, want: http.StatusOK, target: func(_ uint64, t *vegeta.Target) {
		t.URL, t.Header = base+"/api/v1/orders/"+sess.Data.Reference, header("X-API-Key", sd.testKey)
	}}
	code, resp, _, err = do(get, 0)
	if err != nil || code != http.StatusOK {
		return nil, fmt.Errorf("reading the door's order: %d %v %.300s", code, err, resp)
	}
	var order struct {
		Data struct {
			Tickets []struct {
				Code        string `json:"code"`
				EventdateID int64  `json:"eventdate_id"`
			} `json:"tickets"`
		} `json:"data"`
	}
	if err := json.Unmarshal(resp, &order); err != nil || len(order.Data.Tickets) != doorCart {
		return nil, fmt.Errorf("the door's order %s has %d tickets, want %d: %.300s", sess.Data.Reference,
			len(order.Data.Tickets), doorCart, resp)
	}
	codes := make([]doorCode, len(order.Data.Tickets))
	for k, t := range order.Data.Tickets {
		codes[k] = doorCode{code: t.Code, date: t.EventdateID}
	}
	return codes, nil
}

// scanner is the door's scanner key, its codes and the count of scans
// sent, shared by every server the scans go to.
type scanner struct {
	key   string
	codes []doorCode
	n     atomic.Int64 // scans sent so far
	run   int64
}

// endpoint scans the codes in turn at base: the n-th scan (counted over
// every server) reads code n mod len(codes), as an entry on even passes
// over the codes and an exit on odd ones, so that every scan is admitted
// (an exit lets the ticket in again) and a code's scans are a whole pass
// apart. Each scan carries its own Idempotency-Key, as the door page
// sends.
func (sc *scanner) endpoint(base string) endpoint {
	return endpoint{name: "check-in", method: http.MethodPost, want: http.StatusOK, mustContain: []byte(`"result":"admitted"`),
		target: func(_ uint64, t *vegeta.Target) {
			i := sc.n.Add(1) - 1
			c := sc.codes[i%int64(len(sc.codes))]
			dir := "entry"
			if (i/int64(len(sc.codes)))%2 == 1 {
				dir = "exit"
			}
			t.Body, _ = json.Marshal(map[string]any{"code": c.code, "eventdate_id": c.date, "direction": dir, "gate": "North"})
			t.URL = base + "/api/v1/check-ins"
			t.Header = header("X-API-Key", sc.key, "Content-Type", "application/json", "Idempotency-Key", fmt.Sprintf("scan-%d-%d", sc.run, i))
		}}
}

// doorRound runs the scans, closed loop with scanWorkers workers or open
// loop at the target rate, beside live checkouts over the 1,000 events at
// checkoutRate a second; both for d after warm-up.
func doorRound(cfg config, scan, checkout endpoint, open bool, checkoutRate int) doorRun {
	doorLoads(cfg, scan, checkout, open, checkoutRate, cfg.warmup)
	return doorLoads(cfg, scan, checkout, open, checkoutRate, cfg.duration)
}

// doorLoads runs the scans and the checkouts beside them for d.
func doorLoads(cfg config, scan, checkout endpoint, open bool, checkoutRate int, d time.Duration) doorRun {
	var r doorRun
	var wg sync.WaitGroup
	if checkoutRate > 0 {
		wg.Go(func() { r.checkouts = openLoop(checkout, checkoutRate, 256, 0, d) })
	}
	if open {
		r.scans = openLoop(scan, targetScanRate, 512, 0, d)
	} else {
		r.scans = closedLoop(scan, cfg.concurrency, 0, d)
	}
	wg.Wait()
	return r
}

func doorSeries(runs []doorRun, scans bool) series {
	s := make(series, len(runs))
	for i, r := range runs {
		if scans {
			s[i] = r.scans
		} else {
			s[i] = r.checkouts
		}
	}
	return s
}
