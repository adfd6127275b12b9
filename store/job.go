package store

import "context"

// JobCounts returns how many background jobs are in each state.
func JobCounts(ctx context.Context, db *DB) (map[string]int, error) {
	var rows []struct {
		State string `bun:"state"`
		N     int    `bun:"n"`
	}
	if err := db.NewRaw("SELECT state, count(*) AS n FROM river_job GROUP BY state").Scan(ctx, &rows); err != nil {
		return nil, err
	}
	out := make(map[string]int, len(rows))
	for _, r := range rows {
		out[r.State] = r.N
	}
	return out, nil
}
