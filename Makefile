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

.PHONY: test
test: ## go vet, then every test but the fault suite with the race detector (needs Redis and PostgreSQL; see README)
	$(GO) vet $(PKGS)
	$(GO) test -race -count=1 -timeout 25m -skip '$(FAULT_TESTS)' $(TESTFLAGS) $(PKGS)

.PHONY: test-fault
test-fault: ## The fault-injection suite (TestFault*) with the race detector
	$(GO) test -race -count=1 -timeout 10m -run '$(FAULT_TESTS)' $(TESTFLAGS) $(PKGS)

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
