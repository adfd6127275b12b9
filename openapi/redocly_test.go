package openapi

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// redoclyDir is where the pinned Redocly CLI is installed: git-ignored,
// shared by this test and `make lint-openapi`, which runs it.
var redoclyDir = filepath.Join("..", ".tools", "redocly")

// redoclyVersion reads the pin, REDOCLY_VERSION, from the Makefile.
func redoclyVersion(t *testing.T) string {
	t.Helper()
	mk, err := os.ReadFile("../Makefile")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^REDOCLY_VERSION := (\S+)$`).FindSubmatch(mk)
	require.NotNil(t, m, "the Makefile pins REDOCLY_VERSION")
	return string(m[1])
}

// npmUnreachable tells an npm failure for want of the registry from others.
var npmUnreachable = regexp.MustCompile(`ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|network`)

// installRedocly installs @redocly/cli@version into redoclyDir unless it is
// there already, and returns its executable. It skips the test only when
// npm is missing or cannot reach the registry.
func installRedocly(t *testing.T, version string) string {
	t.Helper()
	bin := filepath.Join(redoclyDir, "node_modules", ".bin", "redocly")
	var pkg struct{ Version string }
	if b, err := os.ReadFile(filepath.Join(redoclyDir, "node_modules", "@redocly", "cli", "package.json")); err == nil &&
		json.Unmarshal(b, &pkg) == nil && pkg.Version == version {
		return bin
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skipf("npm is not installed, so Redocly CLI %s cannot be: install Node.js and npm, then `make lint-openapi`", version)
	}
	out, err := exec.Command(npm, "install", "--prefix", redoclyDir, "--no-save", "--no-audit", "--no-fund",
		"--loglevel=error", "@redocly/cli@"+version).CombinedOutput()
	if err != nil {
		if npmUnreachable.Match(out) {
			t.Skipf("the npm registry is unreachable, so Redocly CLI %s cannot be installed (`make lint-openapi` retries):\n%s", version, out)
		}
		t.Fatalf("npm install @redocly/cli@%s: %v\n%s", version, err, out)
	}
	return bin
}

// TestRedoclyRecommended lints the document with Redocly CLI's recommended
// ruleset: any error or warning fails.
func TestRedoclyRecommended(t *testing.T) {
	version := redoclyVersion(t)
	bin := installRedocly(t, version)
	cmd := exec.Command(bin, "lint", "--extends=recommended", "--format=json", "openapi.yaml")
	cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, runErr := cmd.Output() // non-zero exit on errors; the report says which
	var report struct {
		Version string
		Totals  struct{ Errors, Warnings int }
		// Problems are Redocly's findings, each with its rule and place.
		Problems []struct {
			RuleID   string
			Severity string
			Message  string
			Location []struct{ Pointer string }
		}
	}
	require.NoError(t, json.Unmarshal(out, &report), "redocly lint: %v\n%s\n%s", runErr, out, stderr.String())
	require.Equal(t, version, report.Version)
	for _, p := range report.Problems {
		var at []string
		for _, l := range p.Location {
			at = append(at, l.Pointer)
		}
		t.Errorf("%s %s: %s at %s", p.Severity, p.RuleID, p.Message, strings.Join(at, ", "))
	}
	require.Zero(t, report.Totals.Errors+report.Totals.Warnings, "redocly %s recommended: %d errors, %d warnings",
		report.Version, report.Totals.Errors, report.Totals.Warnings)
	t.Logf("redocly %s, recommended ruleset: 0 errors, 0 warnings", report.Version)
}
