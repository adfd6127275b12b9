# Boxoffice: `make run` to try it, `make test` to prove it.
GO ?= go
BIN := bin/boxoffice

.PHONY: help run build test test-short generate verify lint lint-openapi

# Redocly CLI lints the OpenAPI document (openapi's TestRedoclyRecommended
# installs this exact version into the git-ignored .tools/ on first use).
REDOCLY_VERSION := 2.77.0

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

run: build ## build, migrate ./data/boxoffice.db, seed the demo on first start, serve on :8080 (development payments)
	PAYMENT_PROVIDER=$${PAYMENT_PROVIDER:-dev} ./$(BIN) serve --demo

build: ## build the boxoffice binary into bin/ (a first build says what it downloads and compiles)
	@GO=$(GO) ./scripts/build.sh
	CGO_ENABLED=0 $(GO) build -o $(BIN) ./cmd/boxoffice

# -parallel 8: most of cmd/boxoffice's end-to-end tests spend their time
# waiting (job polls, retries, browsers), so the default of GOMAXPROCS (2
# here) left the CPU half idle; beyond 8 the tests starve each other of it.
#
# -race also turns on the compiler's unsafe.Pointer checks (checkptr) in every
# package. In modernc.org/sqlite/lib, SQLite translated from C to Go with a
# uintptr for every pointer, they were a fifth of cmd/boxoffice's CPU (every
# statement is parsed anew); they are off there, and only there. The race
# detector still instruments it like every other package.
RACE_GCFLAGS := -gcflags=modernc.org/sqlite/lib=-d=checkptr=0
#
# gotestsum (a tool of go.mod, run with `go tool`) prints a line as each
# package ends and every failed test's output, instead of go test's silence
# until the slowest package is done; the run's JSON stays in .tools/ and the
# tests slower than 30 s are listed at the end.
TEST_JSON := .tools/test.json
test: lint ## vet, gofmt and the whole suite with the race detector (PostgreSQL too when TEST_DATABASE_URL is set), a line per package
	@mkdir -p .tools
	$(GO) tool gotestsum --format pkgname-and-test-fails --format-hide-empty-pkg --hide-summary=skipped --jsonfile $(TEST_JSON) -- \
	  -race $(RACE_GCFLAGS) -count=1 -parallel 8 -timeout 30m ./...
	@echo "tests slower than 30 s:"; $(GO) tool gotestsum tool slowest --jsonfile $(TEST_JSON) --threshold 30s

test-short: ## the suite without the race detector
	$(GO) test -count=1 ./...

generate: ## regenerate gqlgen code from schema.graphql, then make it run each operation in one goroutine
	$(GO) tool gqlgen generate
	cd graph/sequential/testdata && $(GO) tool gqlgen generate
	$(GO) run ./graph/sequential graph/generated.go

# The second gqlgen run writes graph/sequential's golden input, so a gqlgen
# upgrade shows there too. Untracked files count: gqlgen writes a new
# resolver file for a new schema file.
verify: generate ## regenerate and fail if generated code differs from what is committed (CI runs it)
	git diff --exit-code -- graph resolvers
	@new=$$(git ls-files --others --exclude-standard -- graph resolvers); \
	  if [ -n "$$new" ]; then echo "files under graph or resolvers are not committed (written by make generate?):"; echo "$$new"; exit 1; fi

lint: ## go vet and gofmt
	@echo "lint: go vet ./... and gofmt (a first run compiles every package: minutes)"
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

lint-openapi: ## lint openapi/openapi.yaml with Redocly's recommended rules, failing on any warning (installs @redocly/cli into .tools/ once)
	$(GO) test -count=1 -run '^TestRedoclyRecommended$$' -v ./openapi/

.PHONY: bench bench-peers bench-postgres soak
bench: bench-postgres ## end-to-end benchmark on PostgreSQL (BENCH_DATABASE_URL) and hot-path testing.B; writes bench/results.md
	cd bench && GO=$(GO) $(GO) run -mod=mod .

bench-peers: bench-postgres bench/peers/node_modules/.package-lock.json ## the same GraphQL queries against Boxoffice and PostGraphile 5 (npm ci in bench/peers); writes bench/peers-results.md
	cd bench && GO=$(GO) $(GO) run -mod=mod . peers

soak: bench-postgres ## one tenant runs every hostile-client attack for a minute while another reads and checks out; writes bench/soak-results.md
	cd bench && GO=$(GO) $(GO) run -mod=mod . soak

# PostGraphile 5.1.5 and the Node.js 22 it needs, exactly as
# bench/peers/package-lock.json pins them; reinstalled when the lock file
# changes. npm itself runs on the machine's Node.js, older than the engines
# field the packages ask for, hence the loglevel.
bench/peers/node_modules/.package-lock.json: bench/peers/package-lock.json bench/peers/package.json
	cd bench/peers && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	@touch $@

# PostgreSQL on 127.0.0.1:5432, started like .ci/run does when it is down,
# unless BENCH_DATABASE_URL names another.
bench-postgres:
	@if [ -z "$$BENCH_DATABASE_URL" ] && ! pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; then \
	  echo "bench: starting PostgreSQL"; \
	  pg_ctlcluster --skip-systemctl-redirect "$$(ls /etc/postgresql 2>/dev/null | head -n1)" main start || true; \
	  for _ in $$(seq 1 30); do pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null && break; sleep 1; done; \
	  if ! pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; then \
	    echo "bench: PostgreSQL at 127.0.0.1:5432 is unreachable; start it or set BENCH_DATABASE_URL" >&2; exit 1; \
	  fi; \
	fi
