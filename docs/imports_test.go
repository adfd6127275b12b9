package docs_test

import (
	"errors"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// ruleOwners are the packages that hold the service's rules, each with its
// subpackages. What a page and a job both need (a ticket's PDF, an
// account's rules) lives among them, so neither a job nor a rule has to
// reach into a page to get it (architecture.md, "Packages and imports").
var ruleOwners = []string{
	"accounts", "audit", "catalog", "checkin", "checkout", "idempotency", "jobs", "mail", "payments",
	"provision", "readcache", "refunds", "store", "ticketdoc", "tickets", "webhook",
}

// doors are the packages that answer browsers and API clients: the pages,
// webpage (what the pages share), and the REST and GraphQL layers. They
// call the rules; no rule owner may depend on one of them, directly or
// through another package.
var doors = []string{
	"apiref", "devpaypage", "doorpage", "graph", "hosted", "mailpage", "playground", "portal", "rest",
	"resolvers", "sandbox", "ticketpage", "webpage",
}

// TestRulesImportNoDoor walks the non-test imports of every rule owner and
// names each chain of imports that reaches a door, ending in the import
// that breaks the rule.
func TestRulesImportNoDoor(t *testing.T) {
	t.Parallel()
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^module\s+(\S+)`).FindSubmatch(gomod)
	require.NotNil(t, m, "go.mod names the module")
	module := string(m[1])

	g := importGraph{module: module, imports: map[string][]string{}}
	var broken []string
	for _, owner := range ruleOwners {
		pkgs := g.packagesUnder(t, owner)
		if !slices.Contains(pkgs, owner) {
			broken = append(broken, owner+" is no package of the module: update ruleOwners")
		}
		for _, pkg := range pkgs {
			broken = append(broken, g.chainsToDoors(t, pkg)...)
		}
	}
	if len(broken) > 0 {
		t.Fatalf("rule owners depend on pages or API layers; move what they share into a package that speaks no HTTP:\n\t%s",
			strings.Join(broken, "\n\t"))
	}
}

// shared are the rule owners that exist so that a page and a job can share
// them (the ticket document; the accounts' rules and notices): they speak
// no HTTP at all.
var shared = []string{"accounts", "ticketdoc"}

// TestSharedRulesSpeakNoHTTP refuses net/http and chi among the imports of
// the shared rule owners' own non-test files.
func TestSharedRulesSpeakNoHTTP(t *testing.T) {
	t.Parallel()
	for _, dir := range shared {
		pkg, err := build.Default.ImportDir(filepath.Join(root, dir), 0)
		require.NoError(t, err, "package %s", dir)
		for _, imp := range pkg.Imports {
			require.False(t, imp == "net/http" || strings.HasPrefix(imp, "github.com/go-chi/"), "%s imports %s", dir, imp)
		}
	}
}

// importGraph is the module's packages and what each imports of the module,
// by path relative to the module, read as it is needed.
type importGraph struct {
	module  string
	imports map[string][]string
}

// packagesUnder returns dir's package and those below it (testdata and
// directories without non-test Go files left out), relative to the module.
func (g *importGraph) packagesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var pkgs []string
	err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if name := d.Name(); name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
			return filepath.SkipDir
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		if _, ok := g.importsOf(t, filepath.ToSlash(rel)); ok {
			pkgs = append(pkgs, filepath.ToSlash(rel))
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	require.NoError(t, err)
	return pkgs
}

// importsOf returns the module's packages that rel's non-test files import
// (for this GOOS and GOARCH and the default build tags); false when rel
// holds no such files.
func (g *importGraph) importsOf(t *testing.T, rel string) ([]string, bool) {
	t.Helper()
	if imps, ok := g.imports[rel]; ok {
		return imps, true
	}
	pkg, err := build.Default.ImportDir(filepath.Join(root, filepath.FromSlash(rel)), 0)
	var noGo *build.NoGoError
	if errors.As(err, &noGo) {
		return nil, false
	}
	require.NoError(t, err, "package %s", rel)
	var imps []string
	for _, imp := range pkg.Imports {
		if r, ok := strings.CutPrefix(imp, g.module+"/"); ok {
			imps = append(imps, r)
		}
	}
	g.imports[rel] = imps
	return imps, true
}

// chainsToDoors returns, for each door pkg depends on, the shortest chain
// of imports that gets there: "jobs → portal", "checkout → payments/devpay
// → webpage".
func (g *importGraph) chainsToDoors(t *testing.T, pkg string) []string {
	t.Helper()
	from := map[string]string{pkg: ""}
	var chains []string
	for queue := []string{pkg}; len(queue) > 0; queue = queue[1:] {
		p := queue[0]
		imps, _ := g.importsOf(t, p)
		for _, imp := range imps {
			if _, seen := from[imp]; seen {
				continue
			}
			from[imp] = p
			if !isDoor(imp) {
				queue = append(queue, imp)
				continue
			}
			chain := []string{imp}
			for q := p; q != ""; q = from[q] {
				chain = append(chain, q)
			}
			slices.Reverse(chain)
			chains = append(chains, strings.Join(chain, " → "))
		}
	}
	return chains
}

// isDoor reports whether pkg is a door or below one (graph/model).
func isDoor(pkg string) bool {
	for _, d := range doors {
		if pkg == d || strings.HasPrefix(pkg, d+"/") {
			return true
		}
	}
	return false
}
