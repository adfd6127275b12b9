package storetest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/migrations"
	"github.com/jackc/pgx/v5/pgconn"
)

// Migrating a database costs seconds (hundreds of statements, and on
// PostgreSQL every test process migrates behind one advisory lock), far
// more than most tests themselves. So each kind is migrated once into a
// template, per set of migrations, and every test gets a copy: a file copy
// on SQLite, CREATE DATABASE … TEMPLATE on PostgreSQL. A template is named
// after the migrations it holds (fingerprint), so adding a migration makes
// a new one. A migration edited in place keeps its name: drop the template
// (<db>_tmpl_* on PostgreSQL, boxoffice-storetest-*.db in the temp
// directory) after such an edit.
//
// On PostgreSQL every database the suite makes is named after the database
// TEST_DATABASE_URL names (pgPrefix): on a server shared with others, a
// role may be confined to names it owns, and the suite drops only names
// with its own prefix.

// fingerprint names the registered migrations.
func fingerprint() string {
	h := sha256.New()
	for _, m := range migrations.Migrations.Sorted() {
		fmt.Fprintln(h, m.Name)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

var sqliteTemplate = sync.OnceValues(func() (string, error) {
	path := filepath.Join(os.TempDir(), "boxoffice-storetest-"+fingerprint()+".db")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	// Built beside its final name and renamed into place, so a process
	// running beside this one never copies half a template.
	dir, err := os.MkdirTemp("", "boxoffice-storetest-build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	building := filepath.Join(dir, "template.db")
	if err := migrateAt(context.Background(), "sqlite://"+building); err != nil {
		return "", err
	}
	return path, os.Rename(building, path)
})

// migrateAt migrates the database at rawURL and closes it.
func migrateAt(ctx context.Context, rawURL string) error {
	db, err := store.Open(ctx, rawURL)
	if err != nil {
		return err
	}
	defer db.Close()
	return store.Migrate(ctx, db)
}

// migratedSQLite returns the URL of a copy of the migrated SQLite template
// in the test's temporary directory.
func migratedSQLite(tb testing.TB) string {
	tb.Helper()
	tmpl, err := sqliteTemplate()
	if err != nil {
		tb.Fatalf("storetest: SQLite template: %v", err)
	}
	b, err := os.ReadFile(tmpl)
	if err != nil {
		tb.Fatalf("storetest: SQLite template: %v", err)
	}
	path := filepath.Join(tb.TempDir(), "test.db")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		tb.Fatalf("storetest: copy the SQLite template: %v", err)
	}
	return "sqlite://" + path
}

// pgAdmin is the process's connection pool to TEST_DATABASE_URL, for
// creating and dropping the tests' databases.
var pgAdmin = sync.OnceValues(func() (*store.DB, error) {
	return store.Open(context.Background(), os.Getenv("TEST_DATABASE_URL"))
})

// templateLockID serialises building the PostgreSQL template across test
// processes ("boxtmpl").
const templateLockID = 0x626f78746d706c

// pgTemplates is the process's template on PostgreSQL: built (or found)
// once, and again if another process drops it while this one runs.
var pgTemplates struct {
	sync.Mutex
	name string
	// inUse holds a shared advisory lock on the template's name for as
	// long as the process runs, so another process that migrated a
	// different set of migrations (another checkout of the repository
	// testing beside this one) does not drop it as stale.
	inUse *sql.Conn
}

// pgTemplate returns the name of the migrated template, building it if
// it does not exist; after staleTemplate, it looks again.
func pgTemplate() (string, error) {
	pgTemplates.Lock()
	defer pgTemplates.Unlock()
	if pgTemplates.name != "" {
		return pgTemplates.name, nil
	}
	name, err := buildPGTemplate()
	if err != nil {
		return "", err
	}
	pgTemplates.name = name
	return name, nil
}

// staleTemplate forgets the template, which turned out not to exist.
func staleTemplate() {
	pgTemplates.Lock()
	defer pgTemplates.Unlock()
	pgTemplates.name = ""
}

// inUseKey is the advisory lock key, of the template named by the
// statement's argument, that every process making databases from it
// holds shared.
const inUseKey = "hashtext('boxoffice storetest template in use: ' || ?)"

func buildPGTemplate() (string, error) {
	ctx := context.Background()
	admin, err := pgAdmin()
	if err != nil {
		return "", err
	}
	name := pgPrefix() + "_tmpl_" + fingerprint()
	if pgTemplates.inUse == nil {
		conn, err := admin.Conn(ctx)
		if err != nil {
			return "", err
		}
		if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock_shared("+inUseKey+")", name); err != nil {
			conn.Close()
			return "", err
		}
		pgTemplates.inUse = conn.Conn // released when the process exits
	}
	conn, err := admin.Conn(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock(?)", templateLockID); err != nil {
		return "", err
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(?)", templateLockID) //nolint:errcheck // released with the connection anyway
	var n int
	if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM pg_database WHERE datname = ?", name).Scan(&n); err != nil {
		return "", err
	}
	if n == 1 {
		return name, nil
	}
	// Built under another name and renamed, so a process that died while
	// building leaves nothing a later one would take for a template.
	building := name + "_building"
	for _, stmt := range []string{
		"DROP DATABASE IF EXISTS " + building + " WITH (FORCE)",
		"CREATE DATABASE " + building,
	} {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			return "", err
		}
	}
	if err := migrateAt(ctx, withDatabase(os.Getenv("TEST_DATABASE_URL"), building)); err != nil {
		return "", err
	}
	if _, err := conn.ExecContext(ctx, "ALTER DATABASE "+building+" RENAME TO "+name); err != nil {
		return "", err
	}
	// Templates of older migration sets are not needed any more, unless a
	// process still running makes databases from one: it holds that
	// template's lock shared, so the exclusive try fails.
	var old []string
	// Only this suite's own: the prefix is compared here, not with LIKE,
	// where its underscores would match any character.
	if err := admin.NewRaw("SELECT datname FROM pg_database WHERE datname <> ?", name).
		Scan(ctx, &old); err == nil {
		for _, o := range old {
			if !isTemplateName(o) {
				continue
			}
			var free bool
			if err := conn.QueryRowContext(ctx, "SELECT pg_try_advisory_lock("+inUseKey+")", o).Scan(&free); err != nil || !free {
				continue
			}
			_, _ = conn.ExecContext(ctx, "DROP DATABASE IF EXISTS "+o)
			_, _ = conn.ExecContext(ctx, "SELECT pg_advisory_unlock("+inUseKey+")", o)
		}
	}
	return name, nil
}

// maxPrefix keeps the longest name made from the prefix ("_tmpl_", 12 hex
// digits and "_building": 27 bytes more) within PostgreSQL's 63-byte
// identifiers.
const maxPrefix = 36

// pgPrefix is the start of the name of every database the suite makes on
// PostgreSQL: the name of TEST_DATABASE_URL's database, folded to the
// lower-case letters, digits and underscores an unquoted identifier may
// hold ("boxoffice" when the URL names none).
func pgPrefix() string { return databasePrefix(os.Getenv("TEST_DATABASE_URL")) }

func databasePrefix(rawURL string) string {
	name := ""
	if u, err := url.Parse(rawURL); err == nil {
		name = strings.TrimPrefix(u.Path, "/")
	}
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	p := b.String()
	if p == "" {
		p = "boxoffice"
	}
	if p[0] >= '0' && p[0] <= '9' {
		p = "d" + p
	}
	if len(p) > maxPrefix {
		p = p[:maxPrefix]
	}
	return p
}

// isTemplateName reports whether name is one of this suite's templates:
// the prefix, "_tmpl_" and a fingerprint.
func isTemplateName(name string) bool {
	fp, ok := strings.CutPrefix(name, pgPrefix()+"_tmpl_")
	if !ok || len(fp) != len(fingerprint()) {
		return false
	}
	_, err := hex.DecodeString(fp)
	return err == nil
}

// withDatabase returns base with its database (path) replaced by name.
func withDatabase(base, name string) string {
	u, err := url.Parse(base)
	if err != nil {
		return base
	}
	u.Path = "/" + name
	return u.String()
}

// migratedPostgres creates a database of the test's own from the migrated
// template and returns its URL; it is dropped when the test ends.
func migratedPostgres(tb testing.TB) string {
	tb.Helper()
	base := os.Getenv("TEST_DATABASE_URL")
	if base == "" {
		tb.Fatal("storetest: TEST_DATABASE_URL is not set")
	}
	admin, err := pgAdmin()
	if err != nil {
		tb.Fatalf("storetest: PostgreSQL at TEST_DATABASE_URL is unreachable: %v", err)
	}
	name := pgPrefix() + "_t_" + randomHex(6)
	for try := 1; ; try++ {
		tmpl, err := pgTemplate()
		if err != nil {
			tb.Fatalf("storetest: PostgreSQL template: %v", err)
		}
		_, err = admin.Exec("CREATE DATABASE " + name + " TEMPLATE " + tmpl)
		if err == nil {
			break
		}
		// A process of an older storetest, testing another checkout with
		// other migrations beside this one, dropped the template as stale:
		// build it again.
		var pgErr *pgconn.PgError
		if try < 3 && errors.As(err, &pgErr) && pgErr.Code == "3D000" {
			staleTemplate()
			continue
		}
		tb.Fatalf("storetest: create database: %v", err)
	}
	tb.Cleanup(func() {
		_, _ = admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
	})
	u, err := url.Parse(withDatabase(base, name))
	if err != nil {
		tb.Fatalf("storetest: TEST_DATABASE_URL: %v", err)
	}
	q := u.Query()
	// Names the test's connections, so a test can find its own among those
	// of tests running beside it.
	q.Set("application_name", name)
	u.RawQuery = q.Encode()
	return u.String()
}

// MigratedURL returns the DATABASE_URL of a fresh database of kind that
// is already migrated (a copy of the template), removed when the test ends.
func MigratedURL(tb testing.TB, kind string) string {
	tb.Helper()
	switch kind {
	case "sqlite":
		return migratedSQLite(tb)
	case "postgres":
		return migratedPostgres(tb)
	}
	tb.Fatalf("storetest: unknown database kind %q", kind)
	return ""
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
