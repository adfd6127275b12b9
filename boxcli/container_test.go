package boxcli

import (
	"net/netip"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/urfave/cli/v3"
	"go.yaml.in/yaml/v3"
)

// buildCommand splits a `go build` command line into its environment
// assignments, its flags other than -o, and its package, with the go
// command itself normalised, so two spellings of one build compare equal.
func buildCommand(t *testing.T, line string) (env, flags []string, pkg string) {
	t.Helper()
	fields := strings.Fields(line)
	i := 0
	for ; i < len(fields) && strings.Contains(fields[i], "="); i++ {
		env = append(env, fields[i])
	}
	require.Greater(t, len(fields), i+1, "a go build command: %q", line)
	require.Contains(t, []string{"go", "$(GO)"}, fields[i], "%q", line)
	require.Equal(t, "build", fields[i+1], "%q", line)
	rest := fields[i+2:]
	for j := 0; j < len(rest); j++ {
		switch {
		case rest[j] == "-o":
			j++ // where the binary goes differs, and may
		case strings.HasPrefix(rest[j], "-"):
			flags = append(flags, rest[j])
		default:
			require.Empty(t, pkg, "one package: %q", line)
			pkg = rest[j]
		}
	}
	slices.Sort(env)
	return env, flags, pkg
}

// dockerStages returns the Dockerfile's instructions per stage, each
// instruction on one line (continuations joined), comments left out.
func dockerStages(t *testing.T, src string) [][]string {
	t.Helper()
	src = regexp.MustCompile(`\\\n\s*`).ReplaceAllString(src, "")
	var stages [][]string
	for _, line := range strings.Split(src, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(strings.ToUpper(line), "FROM ") {
			stages = append(stages, nil)
		}
		require.NotEmpty(t, stages, "the Dockerfile starts with FROM")
		stages[len(stages)-1] = append(stages[len(stages)-1], line)
	}
	return stages
}

// cliEnvVars returns every environment variable the CLI reads.
func cliEnvVars() map[string]bool {
	vars := map[string]bool{}
	for _, f := range globalFlags() {
		if e, ok := f.(interface{ GetEnvVars() []string }); ok {
			for _, v := range e.GetEnvVars() {
				vars[v] = true
			}
		}
	}
	return vars
}

// TestContainerFiles checks what can be checked of the container set-up
// without a registry: the image is built like `make build`, runs as a
// non-root user and checks its own health with a command the CLI has, and
// compose.yaml runs the documented production topology with variables the
// CLI reads.
func TestContainerFiles(t *testing.T) {
	t.Parallel()
	read := func(name string) string {
		b, err := os.ReadFile("../" + name)
		require.NoError(t, err)
		return string(b)
	}

	t.Run("BuiltLikeMakeBuild", func(t *testing.T) {
		// The build target's go build line (scripts/build.sh before it only talks).
		m := regexp.MustCompile(`(?m)^build:.*\n(?:\t@.*\n)*\t(.+)$`).FindStringSubmatch(read("Makefile"))
		require.NotNil(t, m, "the Makefile has a build target")
		wantEnv, wantFlags, wantPkg := buildCommand(t, m[1])
		require.Contains(t, wantEnv, "CGO_ENABLED=0", "a static binary")

		var builds []string
		for _, stage := range dockerStages(t, read("Dockerfile")) {
			for _, ins := range stage {
				if cmd, ok := strings.CutPrefix(ins, "RUN "); ok && strings.Contains(cmd, " build ") {
					builds = append(builds, cmd)
				}
			}
		}
		require.Len(t, builds, 1, "one go build in the Dockerfile")
		env, flags, pkg := buildCommand(t, builds[0])
		require.Equal(t, wantEnv, env)
		require.Equal(t, wantFlags, flags)
		require.Equal(t, wantPkg, pkg)
	})

	t.Run("RunsAsNonRootWithHealthcheck", func(t *testing.T) {
		stages := dockerStages(t, read("Dockerfile"))
		require.GreaterOrEqual(t, len(stages), 2, "multi-stage: the toolchain stays out of the image")
		final := stages[len(stages)-1]
		require.Regexp(t, `^FROM gcr\.io/distroless/static`, final[0], "a base with nothing but the binary's needs")
		var user, health, entry string
		for _, ins := range final {
			switch verb, arg, _ := strings.Cut(ins, " "); strings.ToUpper(verb) {
			case "USER":
				user = arg
			case "HEALTHCHECK":
				health = arg
			case "ENTRYPOINT":
				entry = arg
			}
		}
		name, _, _ := strings.Cut(user, ":")
		require.NotEmpty(t, name, "the final stage sets USER")
		require.NotContains(t, []string{"root", "0"}, name)
		require.Contains(t, health, `CMD ["/usr/local/bin/boxoffice", "healthcheck"]`)
		require.Equal(t, `["/usr/local/bin/boxoffice"]`, entry)
		// The health check's command exists, and reads ADDR as serve does.
		var found *cli.Command
		for _, c := range New(nil, nil).Commands {
			if c.Name == "healthcheck" {
				found = c
			}
		}
		require.NotNil(t, found, "boxoffice healthcheck exists")
	})

	t.Run("ComposeRunsTheTopology", func(t *testing.T) {
		var compose struct {
			Services map[string]struct {
				Image       string
				Build       any
				Environment map[string]string
				Volumes     []string
				Ports       []string
				Networks    map[string]struct {
					IPv4Address string `yaml:"ipv4_address"`
				}
			}
		}
		require.NoError(t, yaml.Unmarshal([]byte(read("compose.yaml")), &compose))
		services := compose.Services
		require.Contains(t, services, "postgres")
		require.Contains(t, services, "redis")
		require.Contains(t, services, "lb")

		var instances []string
		for name, s := range services {
			if s.Build != nil {
				instances = append(instances, name)
			}
		}
		slices.Sort(instances)
		require.Equal(t, []string{"boxoffice-1", "boxoffice-2"}, instances, "two instances built from the Dockerfile")

		lb := services["lb"]
		require.Contains(t, lb.Volumes, "./deploy/nginx.conf:/etc/nginx/nginx.conf:ro")
		nginx := read("deploy/nginx.conf")
		lbAddr, err := netip.ParseAddr(lb.Networks["default"].IPv4Address)
		require.NoError(t, err, "the load balancer has a fixed address, so instances can trust it")

		known := cliEnvVars()
		for _, name := range instances {
			env := services[name].Environment
			for _, v := range []string{"DATABASE_URL", "REDIS_URL", "TRUSTED_PROXIES", "PUBLIC_BASE_URL", "ADDR"} {
				require.NotEmpty(t, env[v], "%s sets %s", name, v)
			}
			for v := range env {
				require.True(t, known[v], "%s: %s is not a variable the boxoffice CLI reads", name, v)
			}
			require.True(t, strings.HasPrefix(env["DATABASE_URL"], "postgres://"), "PostgreSQL, shared")
			require.Contains(t, env["DATABASE_URL"], "@postgres:5432/")
			require.Equal(t, "redis://redis:6379/0", env["REDIS_URL"])
			trusted, err := netip.ParsePrefix(env["TRUSTED_PROXIES"])
			require.NoError(t, err)
			require.True(t, trusted.Contains(lbAddr), "%s trusts the load balancer's X-Forwarded-For", name)
			require.Contains(t, nginx, "server "+name+":8080", "the load balancer sends to %s", name)
		}
		require.Contains(t, nginx, "proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;")
	})
}
