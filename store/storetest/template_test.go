package storetest

import (
	"context"
	"net/url"
	"os"
	"strings"
	"testing"
)

func TestDatabasePrefix(t *testing.T) {
	for _, tc := range []struct {
		name, url, want string
	}{
		{"OK", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable", "test"},
		{"Folded", "postgres://u@h/Team-A.ci", "team_a_ci"},
		{"NoDatabase", "postgres://u@h", "boxoffice"},
		{"LeadingDigit", "postgres://u@h/2026", "d2026"},
		{"Long", "postgres://u@h/" + strings.Repeat("a", 80), strings.Repeat("a", maxPrefix)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := databasePrefix(tc.url); got != tc.want {
				t.Fatalf("databasePrefix(%q) = %q, want %q", tc.url, got, tc.want)
			}
		})
	}
}

func TestIsTemplateName(t *testing.T) {
	t.Setenv("TEST_DATABASE_URL", "postgres://u@h/test")
	fp := fingerprint()
	for _, tc := range []struct {
		name string
		db   string
		want bool
	}{
		{"Own", "test_tmpl_" + fp, true},
		{"OwnOlder", "test_tmpl_0123456789ab", true},
		{"OtherPrefix", "other_tmpl_" + fp, false},
		{"LongerPrefix", "testing_tmpl_" + fp, false},
		{"Building", "test_tmpl_" + fp + "_building", false},
		{"TestDatabase", "test_t_0123456789ab", false},
		{"NotHex", "test_tmpl_zzzzzzzzzzzz", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := isTemplateName(tc.db); got != tc.want {
				t.Fatalf("isTemplateName(%q) = %v, want %v", tc.db, got, tc.want)
			}
		})
	}
}

// TestPostgresNamesFollowURL: the databases made on PostgreSQL carry the
// name of TEST_DATABASE_URL's database, and a test's own is gone after it.
func TestPostgresNamesFollowURL(t *testing.T) {
	if os.Getenv("TEST_DATABASE_URL") == "" {
		t.Skip("TEST_DATABASE_URL is not set")
	}
	prefix := pgPrefix()
	var name string
	t.Run("Open", func(t *testing.T) {
		u, err := url.Parse(MigratedURL(t, "postgres"))
		if err != nil {
			t.Fatal(err)
		}
		name = strings.TrimPrefix(u.Path, "/")
		if !strings.HasPrefix(name, prefix+"_t_") {
			t.Fatalf("test database %q does not start with %q", name, prefix+"_t_")
		}
		tmpl, err := pgTemplate()
		if err != nil {
			t.Fatal(err)
		}
		if !isTemplateName(tmpl) {
			t.Fatalf("template %q is not named %s_tmpl_<fingerprint>", tmpl, prefix)
		}
	})
	admin, err := pgAdmin()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := admin.NewRaw("SELECT count(*) FROM pg_database WHERE datname = ?", name).Scan(context.Background(), &n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("database %q still exists after its test", name)
	}
}
