# baton — common tasks. `make help` lists them.
GO        ?= go
PKGS      ?= ./...
TESTFLAGS ?=
DEMOFLAGS ?=
STATICCHECK_VERSION ?= v0.8.2

.PHONY: help
help: ## List the targets
	@grep -hE '^[a-zA-Z_/-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  %-14s %s\n", $$1, $$2}'

.PHONY: test
test: ## go vet, then every test with the race detector (needs Redis and PostgreSQL; see README)
	$(GO) vet $(PKGS)
	$(GO) test -race -count=1 -timeout 25m $(TESTFLAGS) $(PKGS)

.PHONY: lint
lint: ## gofmt and staticcheck
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) $(PKGS)

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
