package store_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

func TestStore(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Now().UTC()

		t.Run("MigrateIsIdempotent", func(t *testing.T) {
			require.NoError(t, store.Migrate(ctx, db))
			n, err := store.PendingMigrations(ctx, db)
			require.NoError(t, err)
			require.Zero(t, n)
		})
		t.Run("ErrConflict", func(t *testing.T) {
			a := &store.Account{Name: "A", Email: "a@example.com", Status: store.AccountActive, CreatedAt: now, UpdatedAt: now}
			require.NoError(t, store.InsertAccount(ctx, db, a))
			dup := *a
			dup.ID = 0
			require.ErrorIs(t, store.InsertAccount(ctx, db, &dup), store.ErrConflict)
		})
		t.Run("ErrNotFound", func(t *testing.T) {
			_, err := store.AccountByID(ctx, db, 424242)
			require.ErrorIs(t, err, store.ErrNotFound)
			require.ErrorIs(t, store.SetAccountStatus(ctx, db, 424242, store.AccountDisabled, now), store.ErrNotFound)
			_, err = store.KeyOwnerByHash(ctx, db, "nope")
			require.ErrorIs(t, err, store.ErrNotFound)
		})
		t.Run("AppRoundTrip", func(t *testing.T) {
			acc, err := store.AccountByEmail(ctx, db, "a@example.com")
			require.NoError(t, err)
			app := &store.App{AccountID: acc.ID, Name: "App", Status: store.AppActive, WebhookSecret: "whsec_x",
				RedirectDomains: []string{"a.example", "b.example"}, CreatedAt: now, UpdatedAt: now}
			require.NoError(t, store.InsertApp(ctx, db, app))
			got, err := store.AppByID(ctx, db, app.ID)
			require.NoError(t, err)
			require.Equal(t, []string{"a.example", "b.example"}, got.RedirectDomains)
			require.Empty(t, got.WebhookURL)
			require.WithinDuration(t, now, got.CreatedAt, time.Millisecond)
		})
	})
}

// TestOpenSQLitePath: a path with characters a file: URI gives meaning to
// opens that very file, not a shorter path other databases would share.
func TestOpenSQLitePath(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"sqlite#01", "what?", "100%", "plain"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), name)
			require.NoError(t, os.Mkdir(dir, 0o700))
			path := filepath.Join(dir, "test.db")
			db, err := store.Open(context.Background(), "sqlite://"+path)
			require.NoError(t, err)
			require.NoError(t, store.Migrate(context.Background(), db))
			require.NoError(t, db.Close())
			info, err := os.Stat(path)
			require.NoError(t, err)
			require.Positive(t, info.Size(), "the tables are in the file named")
			entries, err := os.ReadDir(filepath.Dir(dir))
			require.NoError(t, err)
			require.Len(t, entries, 1, "nothing beside the directory: %v", entries)
		})
	}
}
