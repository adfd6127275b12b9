// Package docs_test checks the repository's documentation against the
// repository: every link in README.md and docs/ resolves to a file (and
// heading) inside it, examples/catalog.json imports, the webhook
// verification snippets of webhooks.md accept a delivery signed by the
// webhook service and refuse tampered ones, the configuration table of
// operator.md names exactly the environment variables the binary reads
// (config_test.go), and the packages that hold the rules import no page and
// no API layer, as architecture.md says (imports_test.go).
package docs_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/provision"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/boxoffice/boxoffice/webhook"
	"github.com/boxoffice/boxoffice/webhook/verify"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"
)

// root is the repository's root, seen from this package.
const root = ".."

// markdownFiles returns README.md and every Markdown file under docs/.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	files := []string{filepath.Join(root, "README.md")}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return err
	})
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 6, "README.md, api.md, operator.md, webhooks.md, architecture.md, spec/ticketing-api.md")
	return files
}

var (
	fence      = regexp.MustCompile("(?ms)^\\s*```.*?^\\s*```\\s*$")
	codeSpan   = regexp.MustCompile("`[^`\n]*`")
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	autoLink   = regexp.MustCompile(`<(https?://[^>\s]+)>`)
	heading    = regexp.MustCompile(`(?m)^#{1,6}\s+(.+?)\s*#*\s*$`)
)

// prose is a Markdown file without its code blocks and code spans, where
// link syntax means nothing.
func prose(src string) string {
	return codeSpan.ReplaceAllString(fence.ReplaceAllString(src, ""), "")
}

// anchors returns the heading anchors GitHub gives a Markdown file.
func anchors(src string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, m := range heading.FindAllStringSubmatch(fence.ReplaceAllString(src, ""), -1) {
		text := regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`).ReplaceAllString(m[1], "$1")
		var b strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		slug := b.String()
		if n := seen[slug]; n > 0 {
			out[slug+"-"+strconv.Itoa(n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

// TestLinks checks that every link of the documentation stays inside the
// repository and resolves: a relative link to an existing file or folder
// (and, for a Markdown file, to one of its headings), an anchor to a
// heading of the same file. The only absolute URLs allowed are those of the
// instance `make run` starts.
func TestLinks(t *testing.T) {
	repo, err := filepath.Abs(root)
	require.NoError(t, err)
	checked := 0
	for _, file := range markdownFiles(t) {
		src, err := os.ReadFile(file)
		require.NoError(t, err)
		rel, _ := filepath.Rel(repo, mustAbs(t, file))
		text := prose(string(src))
		var targets []string
		for _, m := range inlineLink.FindAllStringSubmatch(text, -1) {
			targets = append(targets, m[1])
		}
		for _, m := range autoLink.FindAllStringSubmatch(text, -1) {
			targets = append(targets, m[1])
		}
		for _, target := range targets {
			checked++
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				require.True(t, strings.HasPrefix(target, "http://localhost:8080/"),
					"%s links outside the repository: %s", rel, target)
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			dest := mustAbs(t, file)
			if path != "" {
				dest = filepath.Join(filepath.Dir(mustAbs(t, file)), filepath.FromSlash(path))
				inside, err := filepath.Rel(repo, dest)
				require.NoError(t, err)
				require.False(t, inside == ".." || strings.HasPrefix(inside, ".."+string(filepath.Separator)),
					"%s links outside the repository: %s", rel, target)
				_, err = os.Stat(dest)
				require.NoError(t, err, "%s links to a missing file: %s", rel, target)
			}
			if anchor != "" {
				require.True(t, strings.HasSuffix(dest, ".md"), "%s: an anchor into a non-Markdown file: %s", rel, target)
				destSrc, err := os.ReadFile(dest)
				require.NoError(t, err)
				require.True(t, anchors(string(destSrc))[anchor], "%s links to a missing heading: %s", rel, target)
			}
		}
	}
	t.Logf("%d links checked", checked)
}

func mustAbs(t *testing.T, path string) string {
	t.Helper()
	abs, err := filepath.Abs(path)
	require.NoError(t, err)
	return abs
}

// TestLinkCheckerCatches feeds the link checker's pieces what it must catch.
func TestLinkCheckerCatches(t *testing.T) {
	a := anchors("# Operator guide\n## Health, metrics and logs\n## 7. Errors\n```\n# not a heading\n```\n## Errors\n")
	require.Equal(t, map[string]bool{"operator-guide": true, "health-metrics-and-logs": true, "7-errors": true, "errors": true}, a)
	text := prose("see [a](x.md) and `[b](y.md)`\n```\n[c](z.md)\n```\n<https://example.com/>")
	require.Equal(t, [][]string{{"[a](x.md)", "x.md"}}, inlineLink.FindAllStringSubmatch(text, -1))
	require.Equal(t, "https://example.com/", autoLink.FindStringSubmatch(text)[1])
}

// TestCatalogExample imports examples/catalog.json, which docs/operator.md
// presents as a complete file, into a fresh database of every kind, twice.
func TestCatalogExample(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		src, err := os.ReadFile(filepath.Join(root, "examples", "catalog.json"))
		require.NoError(t, err)
		f, err := catalog.ParseFile(bytes.NewReader(src))
		require.NoError(t, err)
		now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
		first, err := catalog.Import(ctx, db, f, now)
		require.NoError(t, err)
		require.Len(t, first.Venues, 2)
		require.Len(t, first.Events, 3)
		require.Len(t, first.EventDates, 4)
		require.Len(t, first.Tickets, 5)

		// Upserts by reference: a second import changes nothing.
		f, err = catalog.ParseFile(bytes.NewReader(src))
		require.NoError(t, err)
		again, err := catalog.Import(ctx, db, f, now.Add(time.Hour))
		require.NoError(t, err)
		require.Equal(t, first.Tickets, again.Tickets)
		require.Equal(t, first.Events, again.Events)
		require.True(t, again.NothingChanged, "the second import says nothing changed")

		// The file uses every key a catalog file has.
		var generic any
		require.NoError(t, json.Unmarshal(src, &generic))
		used := map[string]bool{}
		var walk func(v any)
		walk = func(v any) {
			switch v := v.(type) {
			case map[string]any:
				for k, x := range v {
					used[k] = true
					walk(x)
				}
			case []any:
				for _, x := range v {
					walk(x)
				}
			}
		}
		walk(generic)
		for _, typ := range []any{catalog.File{}, catalog.VenueSpec{}, catalog.EventSpec{}, catalog.DateSpec{}, catalog.TicketSpec{}} {
			b, err := json.Marshal(typ)
			require.NoError(t, err)
			var keys map[string]any
			require.NoError(t, json.Unmarshal(b, &keys))
			for k := range keys {
				require.True(t, used[k], "examples/catalog.json does not show %q (%T)", k, typ)
			}
		}
	})
}

// webhookHandler is the Go snippet of docs/webhooks.md, verbatim;
// TestWebhookSnippets checks the two stay the same.
func webhookHandler(secret string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body) // the raw body, before any JSON parsing
		if err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		if err := verify.Verify(secret, r.Header, body); err != nil {
			http.Error(w, "bad signature", http.StatusUnauthorized) // tampered, wrong secret, or not within 5 minutes
			return
		}
		// Deduplicate by r.Header.Get(verify.HeaderEventID), then handle the event.
		w.WriteHeader(http.StatusNoContent)
	}
}

// delivery is one webhook request as a receiver gets it.
type delivery struct {
	header http.Header
	body   []byte
}

// realDelivery makes the webhook service sign and send a webhook.test
// event to a receiver, as it does for every event, and returns what
// arrived with the app's secret.
func realDelivery(t *testing.T) (string, delivery) {
	t.Helper()
	ctx := context.Background()
	db := storetest.MustOpen(t, "sqlite")
	got := make(chan delivery, 1)
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- delivery{header: r.Header.Clone(), body: body}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.Close)
	now := func() time.Time { return time.Now().UTC() }
	prov := &provision.Service{DB: db, Now: now, AllowPrivateWebhooks: true}
	acc, err := prov.CreateAccount(ctx, provision.AccountInput{Name: "Docs", Email: "docs@example.com"})
	require.NoError(t, err)
	app, err := prov.CreateApp(ctx, provision.AppInput{AccountID: acc.ID, Name: "Docs app", WebhookURL: rc.URL + "/hooks"})
	require.NoError(t, err)
	svc := &webhook.Service{DB: db, Now: now, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Client: webhook.NewClient(true), AllowPrivate: true,
		Enqueue: func(context.Context, bun.Tx, []webhook.Delivery) error { return nil }}
	id, err := svc.EmitTest(ctx, app.App.ID, "test")
	require.NoError(t, err)
	require.NoError(t, svc.Deliver(ctx, id, "", false))
	d := <-got
	require.Equal(t, id, d.header.Get(verify.HeaderEventID))
	return app.WebhookSecret, d
}

// snippetCase is one delivery the Node and Python snippets judge.
type snippetCase struct {
	Name    string            `json:"name"`
	Secret  string            `json:"secret"`
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"` // base64
	Want    bool              `json:"want"`
}

// snippetCases are the real delivery, and deliveries each snippet must
// refuse: a tampered body, a wrong secret, a correctly signed but stale
// timestamp, and no signature.
func snippetCases(secret string, d delivery) []snippetCase {
	// Keys as Go's http.Header keeps them, so a header replaced stays one header.
	headers := func(ts, sig string) map[string]string {
		h := map[string]string{}
		for k := range d.header {
			h[k] = d.header.Get(k)
		}
		h[http.CanonicalHeaderKey(verify.HeaderTimestamp)] = ts
		if sig == "" {
			delete(h, http.CanonicalHeaderKey(verify.HeaderSignature))
		} else {
			h[http.CanonicalHeaderKey(verify.HeaderSignature)] = sig
		}
		return h
	}
	ts := d.header.Get(verify.HeaderTimestamp)
	sig := d.header.Get(verify.HeaderSignature)
	tampered := bytes.Replace(d.body, []byte(`"environment":"test"`), []byte(`"environment":"live"`), 1)
	old := strconv.FormatInt(time.Now().Add(-10*time.Minute).Unix(), 10)
	b64 := base64.StdEncoding.EncodeToString
	return []snippetCase{
		{"Real", secret, headers(ts, sig), b64(d.body), true},
		{"TamperedBody", secret, headers(ts, sig), b64(tampered), false},
		{"WrongSecret", "whsec_" + strings.Repeat("A", 32), headers(ts, sig), b64(d.body), false},
		{"StaleTimestamp", secret, headers(old, verify.Sign(secret, old, d.body)), b64(d.body), false},
		{"NoSignature", secret, headers(ts, ""), b64(d.body), false},
	}
}

// codeBlock returns the one fenced block of lang in src.
func codeBlock(t *testing.T, src, lang string) string {
	t.Helper()
	m := regexp.MustCompile("(?ms)^```"+lang+"\n(.*?)^```").FindAllStringSubmatch(src, -1)
	require.Len(t, m, 1, "docs/webhooks.md has one %s snippet", lang)
	return m[0][1]
}

// TestWebhookSnippets runs the verification snippets of docs/webhooks.md
// against a delivery the webhook service signed: the Go one in process, the
// Node.js and Python ones with node and python3 when they are installed.
func TestWebhookSnippets(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(root, "docs", "webhooks.md"))
	require.NoError(t, err)
	secret, d := realDelivery(t)
	cases := snippetCases(secret, d)

	t.Run("Go", func(t *testing.T) {
		self, err := os.ReadFile("docs_test.go")
		require.NoError(t, err)
		m := regexp.MustCompile(`(?ms)^func webhookHandler\(.*?^}\n`).Find(self)
		require.NotNil(t, m)
		require.Equal(t, string(m), codeBlock(t, string(src), "go"), "the Go snippet is webhookHandler, verbatim")
		for _, c := range cases {
			body, err := base64.StdEncoding.DecodeString(c.Body)
			require.NoError(t, err)
			req := httptest.NewRequest(http.MethodPost, "/hooks", bytes.NewReader(body))
			for k, v := range c.Headers {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			webhookHandler(c.Secret).ServeHTTP(rec, req)
			want := http.StatusUnauthorized
			if c.Want {
				want = http.StatusNoContent
			}
			require.Equal(t, want, rec.Code, c.Name)
		}
	})

	input, err := json.Marshal(cases)
	require.NoError(t, err)
	want := make([]bool, len(cases))
	for i, c := range cases {
		want[i] = c.Want
	}
	runSnippet := func(t *testing.T, tool, file, program string) {
		path, err := exec.LookPath(tool)
		if err != nil {
			t.Skipf("%s is not installed, so the %s snippet of docs/webhooks.md is not run", tool, t.Name())
		}
		script := filepath.Join(t.TempDir(), file)
		require.NoError(t, os.WriteFile(script, []byte(program), 0o644))
		cmd := exec.Command(path, script)
		cmd.Stdin = bytes.NewReader(input)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		require.NoError(t, err, "%s %s:\n%s", tool, file, stderr.String())
		var got []bool
		require.NoError(t, json.Unmarshal(out, &got), "%s printed %q", tool, out)
		require.Equal(t, want, got, "verdicts on %v", caseNames(cases))
	}
	t.Run("Node", func(t *testing.T) {
		runSnippet(t, "node", "verify.js", codeBlock(t, string(src), "js")+`
// The test's harness: judge each case from stdin, as Node passes headers
// (lower-cased) and the raw body (a Buffer).
const cases = JSON.parse(require("fs").readFileSync(0, "utf8"));
console.log(JSON.stringify(cases.map((c) => verifyBoxoffice(c.secret,
  Object.fromEntries(Object.entries(c.headers).map(([k, v]) => [k.toLowerCase(), v])),
  Buffer.from(c.body, "base64")))));
`)
	})
	t.Run("Python", func(t *testing.T) {
		runSnippet(t, "python3", "verify.py", codeBlock(t, string(src), "python")+`

# The test's harness: judge each case from stdin, with headers looked up
# case-insensitively as web frameworks do, and the raw body as bytes.
import json
import sys


class Headers(dict):
    def get(self, name, default=None):
        for key, value in self.items():
            if key.lower() == name.lower():
                return value
        return default


cases = json.load(sys.stdin)
print(json.dumps([verify_boxoffice(c["secret"], Headers(c["headers"]), base64.b64decode(c["body"])) for c in cases]))
`)
	})
}

func caseNames(cases []snippetCase) string {
	var names []string
	for _, c := range cases {
		names = append(names, fmt.Sprintf("%s=%v", c.Name, c.Want))
	}
	return strings.Join(names, " ")
}
