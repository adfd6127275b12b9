package checkin

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/idempotency"
)

// MaxBatch bounds the scans of one batch (spec/offline-door.md section 2).
const MaxBatch = 500

// BatchScan is one scan of a batch as the body gave it: a scan's input,
// its idempotency key (nil when absent) and the problems decoding found.
// Input is nil when the scan was not a JSON object.
type BatchScan struct {
	Key      *string
	Input    *Input
	Problems apperr.Details
}

// BatchResult is one scan's answer: the Check-in it got, or why it is
// not a scan.
type BatchResult struct {
	CheckIn *View
	Err     *apperr.Error
}

// Batch processes the scans a door queued, each exactly as CheckIn with
// its idempotency key (required here), in the order sent for each code
// and each key (batchLanes; scans of different tickets are independent,
// and go on at once): sending the same batch again answers the same and
// records nothing new. A scan
// that is not one (validation_failed, event_date_not_found,
// idempotency_conflict, and rate_limit_exceeded for a code that matches
// no ticket beyond the scanner's budget, not recorded) answers its error
// in its place; the others are processed all the same. problems are what
// decoding the body found outside the scans.
// Errors: validation_failed (the body, or not 1 to MaxBatch scans; details
// keyed scans); an error that is not a refusal of one scan ends the batch,
// and a resend is safe: what was recorded answers its saved answer.
func (s *Service) Batch(ctx context.Context, sc Scanner, scans []BatchScan, problems apperr.Details) ([]BatchResult, error) {
	d := apperr.Details{}
	for f, msgs := range problems {
		d[f] = append(d[f], msgs...)
	}
	if len(d) == 0 && (len(scans) < 1 || len(scans) > MaxBatch) {
		d.Add("scans", fmt.Sprintf("must hold 1 to %d scans", MaxBatch))
	}
	if err := apperr.Validation(d); err != nil {
		return nil, err
	}
	reqs := make([]Request, len(scans))
	for i, b := range scans {
		reqs[i] = Request{Input: b.Input, Problems: b.Problems}
		if problem := batchKeyProblem(b.Key); problem != "" {
			reqs[i].Problems = apperr.Details{}
			for f, msgs := range b.Problems {
				reqs[i].Problems[f] = append(reqs[i].Problems[f], msgs...)
			}
			reqs[i].Problems.Add("idempotency_key", problem)
		} else {
			reqs[i].Key = *b.Key
		}
	}
	out := make([]BatchResult, len(scans))
	lanes := batchLanes(reqs)
	var (
		next   atomic.Int64
		wg     sync.WaitGroup
		mu     sync.Mutex
		failed error
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for range min(batchWorkers, len(lanes)) {
		wg.Go(func() {
			for {
				l := int(next.Add(1) - 1)
				if l >= len(lanes) || ctx.Err() != nil {
					return
				}
				for _, i := range lanes[l] {
					v, _, err := s.CheckIn(ctx, sc, reqs[i])
					var ae *apperr.Error
					switch {
					case err == nil:
						out[i].CheckIn = v
					case errors.As(err, &ae):
						out[i].Err = ae
					default:
						mu.Lock()
						if failed == nil {
							failed = err
						}
						mu.Unlock()
						cancel()
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if failed != nil {
		return nil, failed
	}
	return out, nil
}

// batchWorkers is how many of a batch's lanes are processed at once: a
// queue of 500 scans is mostly waiting on the database, one scan at a
// time, and different tickets never wait on each other's rows.
const batchWorkers = 8

// batchLanes splits a batch into lanes, each a list of scan indexes in
// the order sent: scans of one code, or under one idempotency key, share
// a lane, so each is processed after the ones sent before it, exactly as
// in the order sent (an entry before its exit; a retry of a key after its
// first scan). Lanes are ordered by their first scan.
func batchLanes(reqs []Request) [][]int {
	parent := make([]int, len(reqs))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	union := func(a, b int) {
		ra, rb := find(a), find(b)
		if ra < rb {
			parent[rb] = ra
		} else if rb < ra {
			parent[ra] = rb
		}
	}
	byCode, byKey := map[string]int{}, map[string]int{}
	for i, r := range reqs {
		if r.Input != nil && r.Input.Code != nil {
			code := strings.ToUpper(strings.TrimSpace(*r.Input.Code))
			if j, ok := byCode[code]; ok {
				union(i, j)
			} else {
				byCode[code] = i
			}
		}
		if r.Key != "" {
			if j, ok := byKey[r.Key]; ok {
				union(i, j)
			} else {
				byKey[r.Key] = i
			}
		}
	}
	index := map[int]int{}
	var lanes [][]int
	for i := range reqs {
		root := find(i)
		l, ok := index[root]
		if !ok {
			l = len(lanes)
			index[root] = l
			lanes = append(lanes, nil)
		}
		lanes[l] = append(lanes[l], i)
	}
	return lanes
}

// batchKeyProblem says what is wrong with a batch scan's idempotency key,
// "" when nothing is.
func batchKeyProblem(key *string) string {
	switch {
	case key == nil || *key == "":
		return "is required"
	case utf8.RuneCountInString(*key) > idempotency.MaxKeyLength:
		return fmt.Sprintf("must be at most %d characters", idempotency.MaxKeyLength)
	case !utf8.ValidString(*key) || strings.ContainsFunc(*key, unicode.IsControl):
		return "must be UTF-8 text without control characters"
	}
	return ""
}
