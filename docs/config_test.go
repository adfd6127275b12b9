package docs_test

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// envReaders are the functions through which Go code reads an environment
// variable, by import path and name. urfave/cli reads the variables of a
// flag's Sources, the names given to cli.EnvVars.
var envReaders = map[string][]string{
	"os":                       {"Getenv", "LookupEnv"},
	"syscall":                  {"Getenv"},
	"github.com/urfave/cli/v3": {"EnvVars"},
}

// wholeEnv are functions that read every variable at once: code that uses
// them reads variables no table can name, so the check refuses them.
var wholeEnv = map[string][]string{
	"os":      {"Environ"},
	"syscall": {"Environ"},
}

// envRead is one variable the code reads, and the flag that takes its
// place when the read is a cli flag's source ("" when there is none).
type envRead struct {
	name, flag string
	pos        token.Position
}

// binaryEnvReads parses the non-test Go files of every package of this
// module the boxoffice binary is built from (./cmd/boxoffice and what it
// imports, transitively, under the current GOOS/GOARCH and build tags) and
// returns every environment variable they read, with the problems that
// keep a read from being checked: a variable name that is not a string
// literal, an env function passed around as a value, or the environment
// read whole. Test files, test-support packages the binary does not link
// (store/storetest) and the bench module are left out: what they read is
// for developers (docs/testing.md), not operators.
func binaryEnvReads(t *testing.T) ([]envRead, []string) {
	t.Helper()
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^module\s+(\S+)`).FindSubmatch(gomod)
	require.NotNil(t, m, "go.mod names the module")
	module := string(m[1])

	var reads []envRead
	var problems []string
	fset := token.NewFileSet()
	seen := map[string]bool{}
	queue := []string{module + "/cmd/boxoffice"}
	for len(queue) > 0 {
		ip := queue[0]
		queue = queue[1:]
		if seen[ip] {
			continue
		}
		seen[ip] = true
		rel := strings.TrimPrefix(strings.TrimPrefix(ip, module), "/")
		dir := filepath.Join(root, filepath.FromSlash(rel))
		pkg, err := build.Default.ImportDir(dir, 0)
		require.NoError(t, err, "package %s", ip)
		for _, imp := range pkg.Imports {
			if imp == module || strings.HasPrefix(imp, module+"/") {
				queue = append(queue, imp)
			}
		}
		for _, name := range slices.Concat(pkg.GoFiles, pkg.CgoFiles) {
			src, err := os.ReadFile(filepath.Join(dir, name))
			require.NoError(t, err)
			// Named from the repository's root, as errors show it.
			f, err := parser.ParseFile(fset, path.Join(rel, name), src, parser.SkipObjectResolution)
			require.NoError(t, err)
			r, p := fileEnvReads(fset, f)
			reads = append(reads, r...)
			problems = append(problems, p...)
		}
	}
	require.Greater(t, len(seen), 10, "the walk reached the binary's packages: %v", seen)
	return reads, problems
}

// fileEnvReads returns the environment variables one file reads; see
// binaryEnvReads.
func fileEnvReads(fset *token.FileSet, f *ast.File) ([]envRead, []string) {
	// The file's import names: an explicit one, else the path's last
	// element that is not a major version (github.com/urfave/cli/v3 is cli).
	imports := map[string]string{}
	for _, spec := range f.Imports {
		p, _ := strconv.Unquote(spec.Path.Value)
		name := path.Base(p)
		if regexp.MustCompile(`^v[0-9]+$`).MatchString(name) {
			name = path.Base(path.Dir(p))
		}
		if spec.Name != nil {
			name = spec.Name.Name
		}
		imports[name] = p
	}
	// is reports whether e names one of funcs, as pkg.Func.
	is := func(e ast.Expr, funcs map[string][]string) bool {
		sel, ok := e.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		id, ok := sel.X.(*ast.Ident)
		return ok && slices.Contains(funcs[imports[id.Name]], sel.Sel.Name)
	}

	var reads []envRead
	var problems []string
	called := map[ast.Expr]bool{}
	// flags maps a cli.EnvVars call to the Name of the flag literal whose
	// Sources it is.
	flags := map[*ast.CallExpr]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CompositeLit:
			var name string
			var sources *ast.CallExpr
			for _, el := range n.Elts {
				kv, ok := el.(*ast.KeyValueExpr)
				if !ok {
					continue
				}
				switch key, _ := kv.Key.(*ast.Ident); {
				case key == nil:
				case key.Name == "Name":
					if lit, ok := kv.Value.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						name, _ = strconv.Unquote(lit.Value)
					}
				case key.Name == "Sources":
					sources, _ = kv.Value.(*ast.CallExpr)
				}
			}
			if sources != nil && name != "" {
				flags[sources] = name
			}
		case *ast.CallExpr:
			if !is(n.Fun, envReaders) {
				return true
			}
			called[n.Fun] = true
			for _, arg := range n.Args {
				lit, ok := arg.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					problems = append(problems, fmt.Sprintf("%s: the variable is not a string literal, so no table can be checked against it", fset.Position(arg.Pos())))
					continue
				}
				name, _ := strconv.Unquote(lit.Value)
				reads = append(reads, envRead{name: name, flag: flags[n], pos: fset.Position(lit.Pos())})
			}
		}
		return true
	})
	ast.Inspect(f, func(n ast.Node) bool {
		if e, ok := n.(ast.Expr); ok && !called[e] && is(e, envReaders) {
			problems = append(problems, fmt.Sprintf("%s: an environment reader used as a value, not called with the variable's name", fset.Position(e.Pos())))
		}
		if e, ok := n.(ast.Expr); ok && is(e, wholeEnv) {
			problems = append(problems, fmt.Sprintf("%s: reads the whole environment; read each variable by name", fset.Position(e.Pos())))
		}
		return true
	})
	return reads, problems
}

// configRow is one row of the configuration table: the variables its
// first cell names and its flag cell.
type configRow struct {
	vars []string
	flag string
	line int
}

// configTable reads the one table of the "Configuration" section of
// docs/operator.md, whose columns are variable, flag, default, meaning.
func configTable(t *testing.T, src string) []configRow {
	t.Helper()
	lines := strings.Split(src, "\n")
	start := slices.Index(lines, "## Configuration")
	require.GreaterOrEqual(t, start, 0, `docs/operator.md has a "## Configuration" section`)
	var rows []configRow
	tables := 0
	inTable := false
	name := regexp.MustCompile("`([A-Z][A-Z0-9_]*)`")
	for i := start + 1; i < len(lines) && !strings.HasPrefix(lines[i], "## "); i++ {
		line := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(line, "|") {
			inTable = false
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for j := range cells {
			cells[j] = strings.TrimSpace(cells[j])
		}
		if !inTable {
			inTable = true
			tables++
			require.Equal(t, []string{"variable", "flag", "default", "meaning"}, cells, "docs/operator.md:%d: the configuration table's header", i+1)
			continue
		}
		if strings.HasPrefix(cells[0], "---") {
			continue
		}
		require.Len(t, cells, 4, "docs/operator.md:%d: a row of four cells", i+1)
		var vars []string
		for _, m := range name.FindAllStringSubmatch(cells[0], -1) {
			vars = append(vars, m[1])
		}
		require.NotEmpty(t, vars, "docs/operator.md:%d: the first cell names a variable in backticks", i+1)
		rows = append(rows, configRow{vars: vars, flag: cells[1], line: i + 1})
	}
	require.Equal(t, 1, tables, "the Configuration section of docs/operator.md holds one table")
	return rows
}

// TestConfigurationTable holds the configuration table of docs/operator.md
// to the code: every environment variable the boxoffice binary reads has a
// row, with its flag when it has one; the table names no variable the
// binary does not read, and none twice.
func TestConfigurationTable(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(root, "docs", "operator.md"))
	require.NoError(t, err)
	rows := configTable(t, string(src))
	reads, problems := binaryEnvReads(t)
	if len(problems) > 0 {
		t.Fatalf("environment reads the table cannot be checked against:\n%s", strings.Join(problems, "\n"))
	}
	require.NotEmpty(t, reads)

	read := map[string]envRead{}
	for _, r := range reads {
		if prev, ok := read[r.name]; ok && prev.flag != "" {
			continue // a flag's read is the one the table describes
		}
		read[r.name] = r
	}
	table := map[string]configRow{}
	var errs []string
	for _, row := range rows {
		for _, v := range row.vars {
			if prev, ok := table[v]; ok {
				errs = append(errs, fmt.Sprintf("docs/operator.md:%d: %s is already in the table (line %d)", row.line, v, prev.line))
			}
			table[v] = row
		}
	}
	for _, name := range sortedKeys(read) {
		r := read[name]
		row, ok := table[name]
		switch {
		case !ok:
			errs = append(errs, fmt.Sprintf("%s reads %s, which the configuration table of docs/operator.md lacks", r.pos, name))
		case r.flag == "" && row.flag != "—":
			errs = append(errs, fmt.Sprintf("docs/operator.md:%d: %s has no flag (%s), so its flag cell is —, not %s", row.line, name, r.pos, row.flag))
		case r.flag != "" && !strings.Contains(row.flag, "`--"+r.flag+"`"):
			errs = append(errs, fmt.Sprintf("docs/operator.md:%d: %s is the flag `--%s` (%s); the flag cell says %s", row.line, name, r.flag, r.pos, row.flag))
		}
	}
	for _, name := range sortedKeys(table) {
		if _, ok := read[name]; !ok {
			errs = append(errs, fmt.Sprintf("docs/operator.md:%d: the configuration table lists %s, which the boxoffice binary does not read", table[name].line, name))
		}
	}
	if len(errs) > 0 {
		t.Fatalf("the configuration table and the code disagree:\n%s", strings.Join(errs, "\n"))
	}
	t.Logf("%d variables read by the binary, all in the table", len(read))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// TestEnvReadsCatches feeds the reader finder what it must find and what
// it must refuse, so TestConfigurationTable cannot pass by finding nothing.
func TestEnvReadsCatches(t *testing.T) {
	const src = `package x

import (
	"os"
	ucli "github.com/urfave/cli/v3"
)

var flags = []ucli.Flag{&ucli.StringFlag{Name: "addr", Sources: ucli.EnvVars("ADDR", "PORT")}}

func f(name string) {
	_ = os.Getenv("A")
	_, _ = os.LookupEnv("B")
	_ = os.Getenv(name)
	get := os.Getenv
	_ = os.Environ()
	_ = get
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", src, parser.SkipObjectResolution)
	require.NoError(t, err)
	reads, problems := fileEnvReads(fset, f)
	var got []string
	for _, r := range reads {
		got = append(got, r.name+"="+r.flag)
	}
	require.Equal(t, []string{"ADDR=addr", "PORT=addr", "A=", "B="}, got)
	require.Len(t, problems, 3, "%q", problems)
	require.Contains(t, problems[0], "x.go:13:16: the variable is not a string literal")
	require.Contains(t, problems[1], "x.go:14:9: an environment reader used as a value")
	require.Contains(t, problems[2], "x.go:15:6: reads the whole environment")

	rows := configTable(t, "# x\n## Configuration\n\n| variable | flag | default | meaning |\n|---|---|---|---|\n"+
		"| `ADDR` | `--addr` | `:8080` | x |\n| `SANDBOX_EXPIRY` / `LIVE_EXPIRY` | — | `60m` | y |\n\n## Commands\n| a | b |\n")
	require.Equal(t, []configRow{{vars: []string{"ADDR"}, flag: "`--addr`", line: 6}, {vars: []string{"SANDBOX_EXPIRY", "LIVE_EXPIRY"}, flag: "—", line: 7}}, rows)
}
