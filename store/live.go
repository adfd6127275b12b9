package store

import (
	"context"
	"strconv"
	"strings"

	"github.com/uptrace/bun"
)

// LiveChannel is the PostgreSQL channel the order, stock and check-in
// triggers notify; a payload reads "KIND KEY SCHEMA".
const LiveChannel = "boxoffice_live"

// Kinds of live change.
const (
	// LiveOrder: an order's status, payment reference or updated_at
	// changed; the key is its reference.
	LiveOrder = "order"
	// LiveStock: the quantity, sold or held of a date's tickets moved, or
	// a ticket was added or removed; the key is the event date id.
	LiveStock = "stock"
	// LiveCheckIn: a scan of a date was recorded; the key is
	// "ENVIRONMENT:EVENT_DATE_ID" (LiveCheckInKey).
	LiveCheckIn = "checkin"
)

// LiveCheckInKey is the key of a LiveCheckIn change: scans of a date in
// an environment.
func LiveCheckInKey(env string, dateID int64) string {
	return env + ":" + strconv.FormatInt(dateID, 10)
}

// LiveChange reads a LiveChannel notification: the kind and key of the
// change, and ok false when it is not a change of this process's schema
// (a Missed notification included).
func LiveChange(n Notification) (kind, key string, ok bool) {
	// "KIND KEY SCHEMA": neither kind nor key holds a space.
	parts := strings.SplitN(n.Payload, " ", 3)
	if n.Missed || len(parts) != 3 || parts[2] != n.Schema {
		return "", "", false
	}
	return parts[0], parts[1], true
}

// LiveVersions returns SQLite's live change counters by kind (LiveOrder,
// LiveStock, LiveCheckIn): each moves whenever a change of its kind commits, from any
// process sharing the file. PostgreSQL notifies instead (LiveChannel).
func LiveVersions(ctx context.Context, db bun.IDB) (map[string]uint64, error) {
	var rows []struct {
		Kind string `bun:"kind"`
		N    uint64 `bun:"n"`
	}
	if err := db.NewRaw("SELECT kind, n FROM live_version").Scan(ctx, &rows); err != nil {
		return nil, translate(err)
	}
	out := make(map[string]uint64, len(rows))
	for _, r := range rows {
		out[r.Kind] = r.N
	}
	return out, nil
}
