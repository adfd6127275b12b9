package checkin_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/checkin"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// TestValidation: a malformed scan is validation_failed with details,
// never a 500, and never reaches the database; a date of another event
// is event_date_not_found. Neither is recorded as a scan.
func TestValidation(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		b := setup(t, db)
		door := b.scanner(t, "DEMO-CHALEWOTE", store.EnvTest)
		code := b.gaCode(t, store.EnvTest)
		now := b.f.Now
		for _, tc := range []struct {
			name     string
			in       *checkin.Input
			problems apperr.Details
			want     apperr.Details
		}{
			{"ErrNoBody", nil, apperr.Details{"body": {"is not valid JSON (x)"}}, apperr.Details{"body": {"is not valid JSON (x)"}}},
			{"ErrEmpty", &checkin.Input{}, nil, apperr.Details{"code": {"is required"}, "eventdate_id": {"is required"}}},
			{"ErrWrongTypes", &checkin.Input{}, apperr.Details{"code": {"must be a string"}, "eventdate_id": {"must be an integer"}},
				apperr.Details{"code": {"must be a string"}, "eventdate_id": {"must be an integer"}}},
			{"ErrBlankCode", b.input(t, "  ", "DEMO-CHALEWOTE-1"), nil, apperr.Details{"code": {"is required"}}},
			{"ErrLongCode", b.input(t, strings.Repeat("A", 129), "DEMO-CHALEWOTE-1"), nil,
				apperr.Details{"code": {"must be at most 128 characters"}}},
			{"ErrNUL", b.input(t, code[:10]+"\x00"+code[10:], "DEMO-CHALEWOTE-1"), nil,
				apperr.Details{"code": {"must be UTF-8 text without control characters"}}},
			{"ErrNotUTF8", b.input(t, "TEST\xff\xfe", "DEMO-CHALEWOTE-1"), nil,
				apperr.Details{"code": {"must be UTF-8 text without control characters"}}},
			{"ErrDateZero", &checkin.Input{Code: &code, EventdateID: ptr(0)}, nil, apperr.Details{"eventdate_id": {"must be a positive integer"}}},
			{"ErrDirection", b.input(t, code, "DEMO-CHALEWOTE-1", func(in *checkin.Input) { in.Direction = ptr("sideways") }), nil,
				apperr.Details{"direction": {"must be entry or exit"}}},
			{"ErrLongGate", b.input(t, code, "DEMO-CHALEWOTE-1", gate(strings.Repeat("g", 65))), nil,
				apperr.Details{"gate": {"must be at most 64 characters"}}},
			{"ErrGateControl", b.input(t, code, "DEMO-CHALEWOTE-1", gate("North\x00")), nil,
				apperr.Details{"gate": {"must not contain control characters or bidirectional text controls"}}},
			{"ErrGateNotUTF8", b.input(t, code, "DEMO-CHALEWOTE-1", gate("N\xff")), nil, apperr.Details{"gate": {"must be UTF-8 text"}}},
			{"ErrScannedAtFormat", b.input(t, code, "DEMO-CHALEWOTE-1", func(in *checkin.Input) { in.ScannedAt = ptr("yesterday") }), nil,
				apperr.Details{"scanned_at": {"must be an RFC 3339 date-time such as 2026-12-24T18:05:00Z"}}},
			{"ErrScannedAtAhead", b.input(t, code, "DEMO-CHALEWOTE-1", at(now.Add(checkin.MaxAhead+time.Second))), nil,
				apperr.Details{"scanned_at": {"must not be more than 5 minutes ahead of the server's clock"}}},
			{"ErrScannedAtOld", b.input(t, code, "DEMO-CHALEWOTE-1", at(now.Add(-checkin.MaxAge-time.Second))), nil,
				apperr.Details{"scanned_at": {"must not be more than 7 days old"}}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				v, _, err := b.svc.CheckIn(context.Background(), door, checkin.Request{Input: tc.in, Problems: tc.problems})
				require.Nil(t, v)
				e := apperr.From(err)
				require.Equal(t, apperr.ValidationFailed, e.Code, "%v", err)
				require.Equal(t, "The request payload failed validation.", e.Message)
				require.Equal(t, tc.want, e.Details)
			})
		}

		t.Run("ErrEventDateNotFound", func(t *testing.T) {
			for _, date := range []int{b.f.ID(t, "DEMO-HIGHLIFE-1"), 1 << 30} {
				_, _, err := b.svc.CheckIn(context.Background(), door, checkin.Request{Input: &checkin.Input{Code: &code, EventdateID: &date}})
				require.Equal(t, apperr.EventDateNotFound, apperr.CodeOf(err))
				_, err = b.svc.Stats(context.Background(), door, int64(date))
				require.Equal(t, apperr.EventDateNotFound, apperr.CodeOf(err))
			}
		})
		t.Run("ErrIdempotencyKey", func(t *testing.T) {
			_, _, err := b.svc.CheckIn(context.Background(), door, checkin.Request{Key: strings.Repeat("k", 129), Input: b.input(t, code, "DEMO-CHALEWOTE-1")})
			require.Equal(t, apperr.InvalidIdempotencyKey, apperr.CodeOf(err))
		})

		n, err := db.NewSelect().Model((*store.CheckIn)(nil)).Count(context.Background())
		require.NoError(t, err)
		require.Zero(t, n, "a request that is not a scan records none")
	})
}

// TestOffline: a scan's scanned_at may be up to 5 minutes ahead of the
// server and up to 7 days old; the scan is recorded at that time, and a
// first admission's checked_in_at is it.
func TestOffline(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		b := setup(t, db)
		door := b.scanner(t, "DEMO-CHALEWOTE", store.EnvTest)
		for _, when := range []time.Time{b.f.Now.Add(checkin.MaxAhead), b.f.Now.Add(-checkin.MaxAge), b.f.Now.Add(-time.Minute)} {
			v := b.scan(t, door, b.gaCode(t, store.EnvTest), "DEMO-CHALEWOTE-1", at(when))
			require.True(t, v.Admitted())
			require.Equal(t, when.UTC().Format(time.RFC3339), v.ScannedAt)
			require.Equal(t, v.ScannedAt, *v.Ticket.CheckedInAt)
		}
		v := b.scan(t, door, b.gaCode(t, store.EnvTest), "DEMO-CHALEWOTE-1")
		require.Equal(t, b.f.Now.UTC().Format(time.RFC3339), v.ScannedAt, "without scanned_at, the scan is now")
	})
}
