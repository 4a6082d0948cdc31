# baton — common tasks. `make help` lists them.
GO        ?= go
PKGS      ?= ./...
TESTFLAGS ?=
DEMOFLAGS ?=
STATICCHECK_VERSION ?= v0.8.2

.PHONY: help
help: ## List the targets
	@grep -hE '^[a-zA-Z_/-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  %-14s %s\n", $$1, $$2}'

# Fault-injection tests (servers killed, paused and restarted, connections
# blackholed or delayed through testenv.Proxy, clocks offset) are named
# TestFault*: `make test` skips them, `make test-fault` runs only them, and
# CI runs both. A plain `go test ./...` runs everything.
FAULT_TESTS ?= ^TestFault

# Every directory with a go.mod is a module of this repository (the library,
# bench/, providers with their own dependencies...); `make test` runs them all,
# excluding none, so a new module is tested as soon as it is added.
MODULES   := $(sort $(patsubst %/go.mod,%,$(shell find . -name go.mod -not -path './.git/*')))
GOTESTSUM_VERSION ?= v1.13.0
GOTESTSUM ?= $(GO) run gotest.tools/gotestsum@$(GOTESTSUM_VERSION)
# Passed through the environment, so flags such as -run='^(A|B)$$' need no
# quoting inside the loop's shell.
export TESTFLAGS
# Subtests (t.Parallel) run at once within a test binary. Most of the
# suite waits on real servers and real lease lengths rather than computing
# (lockprovider/redis: 12 s of CPU over 38 s with go test's default of
# GOMAXPROCS, 2 here), so more of them at once cuts the wall time without
# adding work. Every test isolates itself (key prefix, schema), so any
# number may share a server.
TEST_PARALLEL ?= 8

.PHONY: test
test: ## go vet, then every test of every module but the fault suite, with the race detector (needs Redis and PostgreSQL; see README)
	@set -e; for m in $(MODULES); do echo "== go vet $$m"; (cd $$m && $(GO) vet ./...); done
	@# One gotestsum over all modules: a line per test as it ends, then the
	@# totals (passed, failed, skipped) of the whole run.
	$(GOTESTSUM) --format testname \
		--post-run-command 'sh -c "p=$$((TESTS_TOTAL - TESTS_FAILED - TESTS_SKIPPED)); [ $$p -ge 0 ] || p=0; echo $$p passed, $$TESTS_FAILED failed, $$TESTS_SKIPPED skipped"' \
		--raw-command -- sh -c 'rc=0; for m in $(MODULES); do (cd $$m && $(GO) test -json -race -count=1 -timeout 25m -parallel $(TEST_PARALLEL) -skip '\''$(FAULT_TESTS)'\'' $$TESTFLAGS ./...) || rc=1; done; exit $$rc'

.PHONY: test-load
test-load: ## `make test` LOAD_RUNS times (default 3) beside a CPU hog that keeps every core busy; prints each run's time
	.ci/test-load

# MOD, PKG, RUN, COUNT and FLAGS reach .ci/test-flaky through the environment
# (make exports variables set on its command line), so patterns such as
# RUN='^Test(A|B)$' need no quoting here; but make expands "$|" itself, so
# a pattern with "$|" must be given as RUN='^(TestA|TestB)$' instead. A
# pattern that matches no test fails rather than passing with nothing run.
.PHONY: test-flaky
test-flaky: ## PKG's tests (of the module in MOD) matching RUN, COUNT times (default 20) with -race beside a busy loop per core; prints passes and failing tests
	TEST_PARALLEL=$(TEST_PARALLEL) .ci/test-flaky

.PHONY: test-fault
test-fault: ## The fault-injection suite (TestFault*) of every module, with the race detector
	@set -e; for m in $(MODULES); do echo "== fault tests in $$m"; \
		(cd $$m && $(GO) test -race -count=1 -timeout 10m -run '$(FAULT_TESTS)' $$TESTFLAGS ./...); done

# The seeded robustness run (internal/robust): the lock workload on every
# backend through fault proxies under a fault schedule drawn from SEED, the
# whole history checked. One SEED for every backend, printed first, replays
# the schedules; ROBUST_SECONDS is the length per backend. `make test`
# leaves it out (the tests skip without ROBUST_TESTS=1).
ROBUST_SECONDS ?= 8
ROBUST_PKGS    := ./internal/integration/robusttest ./internal/integration/shedlockmysqltest
ROBUST_SKIP    ?=

.PHONY: test-robust
test-robust: ## The seeded robustness run on every backend (SEED=n replays; ROBUST_SECONDS per backend, default 8)
	@seed=$${SEED:-$$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}; start=$$(date +%s); echo "== test-robust SEED=$$seed"; \
	export ROBUST_TESTS=1 SEED=$$seed ROBUST_SECONDS=$(ROBUST_SECONDS); rc=0; out=$$(mktemp); \
	$(GO) test -count=1 -p 1 -timeout 5m -v -run '^TestRobust' $(if $(ROBUST_SKIP),-skip '$(ROBUST_SKIP)') $(ROBUST_PKGS) >$$out 2>&1 || rc=1; \
	(cd lockprovider/etcd && $(GO) test -count=1 -p 1 -timeout 5m -v -run '^TestRobust' ./internal/robusttest) >>$$out 2>&1 || rc=1; \
	if [ $$rc = 0 ]; then grep -E '^(--- |ok)|robust ' $$out; else cat $$out; fi; rm -f $$out; \
	echo "== test-robust SEED=$$seed done in $$(( $$(date +%s) - start ))s"; exit $$rc

# api/ records the exported API of every public package, a file per package
# (see internal/cmd/apidump), so that an API change shows in review.
APIDUMP ?= $(GO) run ./internal/cmd/apidump

.PHONY: api
api: ## Regenerate api/, the exported API of every public package; commit it with the change
	$(APIDUMP) -out api

.PHONY: test-docker
test-docker: ## `make test` against Redis and PostgreSQL containers (needs a Docker engine, not the server binaries)
	cd tools/testservers && $(GO) run . -- $(MAKE) -C $(CURDIR) test

.PHONY: lint
lint: depcheck ## gofmt, api/ up to date (make api), staticcheck in every module, and the dependency budgets
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && $(APIDUMP) -out "$$tmp" && \
		if ! diff -ruN api "$$tmp"; then echo "exported API changed: run make api and commit api/"; exit 1; fi
	@set -e; for m in $(MODULES); do echo "== staticcheck $$m"; (cd $$m && $(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...); done

.PHONY: depcheck
depcheck: ## What an application importing scheduler + one provider (and other cases) downloads and links stays within budget, with no other backend's driver
	.ci/depcheck

# A private redis-server when one is installed: its CPU and command counts
# per operation are then the contenders' alone.
BENCHFLAGS ?= $(if $(shell command -v redis-server),-redis-server $(shell command -v redis-server))

.PHONY: bench
bench: ## baton beside its peers (bench module, ~4 min); rewrites docs/benchmarks.md and docs/bench/*.svg
	cd bench && $(GO) run ./cmd/benchrun -out ../docs $(BENCHFLAGS)

.PHONY: bench-go
bench-go: ## The in-tree Go benchmarks of baton itself
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

.PHONY: demo
demo: ## Example app: 3 replicas for 30s, live log, exactly-once summary (DEMOFLAGS=-help lists options)
	$(GO) build -o bin/ ./examples/cronapp ./examples/cronapp/cmd/demo
	bin/demo -app bin/cronapp $(DEMOFLAGS)

.PHONY: tidy
tidy: ## go mod tidy
	$(GO) mod tidy
