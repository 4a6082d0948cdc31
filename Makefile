# baton — common tasks. `make help` lists them.
GO        ?= go
PKGS      ?= ./...
TESTFLAGS ?=
DEMOFLAGS ?=
STATICCHECK_VERSION ?= v0.8.2

.PHONY: help
help: ## List the targets
	@grep -hE '^[a-zA-Z_/-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  %-14s %s\n", $$1, $$2}'

# Every directory with a go.mod is a module of this repository (the library,
# bench/, providers with their own dependencies...); `make test` runs them all,
# excluding none, so a new module is tested as soon as it is added.
MODULES   := $(sort $(patsubst %/go.mod,%,$(shell find . -name go.mod -not -path './.git/*')))
GOTESTSUM_VERSION ?= v1.13.0
GOTESTSUM ?= $(GO) run gotest.tools/gotestsum@$(GOTESTSUM_VERSION)
# Passed through the environment, so flags such as -run='^(A|B)$$' need no
# quoting inside the loop's shell.
export TESTFLAGS

.PHONY: test
test: ## go vet, then every test of every module with the race detector (needs Redis and PostgreSQL; see README)
	@set -e; for m in $(MODULES); do echo "== go vet $$m"; (cd $$m && $(GO) vet ./...); done
	@# One gotestsum over all modules: a line per test as it ends, then the
	@# totals (passed, failed, skipped) of the whole run.
	$(GOTESTSUM) --format testname \
		--post-run-command 'sh -c "p=$$((TESTS_TOTAL - TESTS_FAILED - TESTS_SKIPPED)); [ $$p -ge 0 ] || p=0; echo $$p passed, $$TESTS_FAILED failed, $$TESTS_SKIPPED skipped"' \
		--raw-command -- sh -c 'rc=0; for m in $(MODULES); do (cd $$m && $(GO) test -json -race -count=1 -timeout 25m $$TESTFLAGS ./...) || rc=1; done; exit $$rc'

.PHONY: lint
lint: ## gofmt and staticcheck
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) $(PKGS)

.PHONY: bench
bench: ## Benchmarks (providers, peers side by side, rate limiter, scheduler)
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

.PHONY: demo
demo: ## Example app: 3 replicas for 30s, live log, exactly-once summary (DEMOFLAGS=-help lists options)
	$(GO) build -o bin/ ./examples/cronapp ./examples/cronapp/cmd/demo
	bin/demo -app bin/cronapp $(DEMOFLAGS)

.PHONY: tidy
tidy: ## go mod tidy
	$(GO) mod tidy
