# kcache build targets. `make test` is the one command that proves the tree is good.

GO        ?= go
BIN       := $(CURDIR)/bin
PKGS      := ./...
STATICCHECK_VERSION := v0.8.2
GOIMPORTS_VERSION   := v0.52.0
# FUZZTIME is a count of executions (Nx), not a duration: with a duration, Go 1.26's fuzz
# coordinator can report a spurious "context deadline exceeded" failure when the time runs out
# (golang/go#75804, fixed in Go 1.27). A count has no deadline to race.
FUZZTIME  ?= 20000x
# PUBLISHED_MODULES are the modules users install with `go get` ("." is the root module,
# github.com/kcache/cache), released together at one version (RELEASING.md). `make test`,
# `make lint`, `make release-check` and `make compat-matrix` cover every one of them: a new
# published module is added here.
PUBLISHED_MODULES := . clientgo ctrlclient prometheus sharding
RELEASE_VERSION   ?= v0.1.0
# MODULES are the modules nested in this repository (each with its own go.mod), which `make
# lint` staticchecks as well as the root module. test/integration/servers is left out: it only
# wraps the kube-apiserver and etcd mains, and checking it type-checks all of Kubernetes.
MODULES   := $(filter-out .,$(PUBLISHED_MODULES)) examples/clientgo \
	examples/controller-runtime examples/sharded bench bench/priorityqueue test/compat \
	test/docs test/integration test/browser test/release
BENCHTIME ?= 1s

.PHONY: all test vet lint release-check fmt browser bench bench-compare bench-build bench-priorityqueue fuzz soak cover example integration compat compat-matrix tools clean

all: test

## test: go vet, then every unit test under the race detector, in every published module.
test: vet
	@set -e; for m in $(PUBLISHED_MODULES); do echo "== go test -race: $$m"; (cd $$m && $(GO) test -race -count=1 ./...); done

vet:
	@set -e; for m in $(PUBLISHED_MODULES); do echo "== go vet: $$m"; (cd $$m && $(GO) vet ./...); done

## lint: gofmt/goimports must have nothing to say, staticcheck must pass.
lint: tools
	@out="$$($(BIN)/goimports -l -local github.com/kcache/cache $$(git ls-files '*.go'))"; \
	if [ -n "$$out" ]; then echo "goimports would change:"; echo "$$out"; exit 1; fi
	$(BIN)/staticcheck $(PKGS)
	@set -e; for m in $(MODULES); do echo "staticcheck: $$m"; (cd $$m && $(BIN)/staticcheck ./...); done

## fmt: rewrite files with goimports.
fmt: tools
	$(BIN)/goimports -w -local github.com/kcache/cache $$(git ls-files '*.go')

tools: $(BIN)/staticcheck $(BIN)/goimports

$(BIN)/staticcheck:
	GOBIN=$(BIN) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

$(BIN)/goimports:
	GOBIN=$(BIN) $(GO) install golang.org/x/tools/cmd/goimports@$(GOIMPORTS_VERSION)

## browser: the debug page of examples/controller in headless Chromium (test/browser, a module
## of its own); skips without a browser. Prints the screenshot's path.
browser:
	cd test/browser && $(GO) vet ./... && $(GO) test -count=1 -v ./...

## example: run the main example, a controller against the in-memory fake API source.
example:
	$(GO) run ./examples/controller

## bench: every Go benchmark of the main module, with allocations.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) $(PKGS)

## bench-compare: the same workloads against kcache and client-go v0.37.2, interleaved in one
## process, printing kcache/client-go ratios (bench/, a module of its own). Knobs: ROUNDS,
## CMP_BENCHTIME (per light workload run), CMP_RUN (regexp of workloads), CMP_FLAGS (e.g. -full).
ROUNDS        ?= 5
CMP_BENCHTIME ?= 200ms
CMP_RUN       ?=
CMP_FLAGS     ?=
bench-compare:
	cd bench && $(GO) run . -rounds $(ROUNDS) -benchtime $(CMP_BENCHTIME) -run '$(value CMP_RUN)' $(CMP_FLAGS)

## bench-build: build and vet bench/ and bench/priorityqueue without running them (CI keeps
## them from rotting).
bench-build:
	cd bench && $(GO) build -o /dev/null ./... && $(GO) vet ./...
	cd bench/priorityqueue && $(GO) vet ./...

## bench-priorityqueue: kcache's priority queue against controller-runtime's, interleaved over
## runs, printing ratios with their spread (bench/priorityqueue, a module of its own).
bench-priorityqueue:
	cd bench/priorityqueue && ./compare.sh 5 200ms

## fuzz: a short run of every fuzz target (FUZZTIME executions each; about a minute in all).
fuzz:
	@set -e; for pkg in $$($(GO) list $(PKGS)); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$f"; \
	    $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

## soak: TestExtensionsUnderFaults — every kcache extension at once against the fake source's
## faults, see its doc comment — at a large size under the race detector: SOAK_CHANGES changes
## over 10,000 keys (default 300,000: under 4 minutes with the build on two idle cores, about 6
## on busy ones), SOAK_SEED to vary the run.
SOAK_CHANGES ?= 300000
SOAK_SEED    ?= 1
soak:
	$(GO) test -race -count=1 -timeout 60m -run '^TestExtensionsUnderFaults$$' -v . -args -soak.changes=$(SOAK_CHANGES) -soak.seed=$(SOAK_SEED)

## cover: unit tests with a coverage profile and a per-function summary.
cover:
	$(GO) test -count=1 -coverprofile=coverage.out $(PKGS)
	$(GO) tool cover -func=coverage.out | tail -1

## compat: check that the public API is source-compatible with client-go v0.37.2
## (test/compat, a module of its own so the root module never depends on client-go).
compat:
	cd test/compat && $(GO) test -count=1 ./...

## compat-matrix: build every published module and run its tests (without the race detector)
## against the newest patch of every Kubernetes minor it supports (README, "Supported
## versions"): from the minor its go.mod requires, the lowest, which `make test` covers, to the
## newest. Knobs: COMPAT_VERSIONS (newest patch of each minor), COMPAT_MODULES.
COMPAT_VERSIONS ?= v0.34.13 v0.35.10 v0.36.6 v0.37.2
COMPAT_MODULES  ?= $(PUBLISHED_MODULES)
compat-matrix:
	COMPAT_VERSIONS='$(COMPAT_VERSIONS)' test/compat-matrix.sh $(COMPAT_MODULES)

## release-check: serve every published module at RELEASE_VERSION from a local module proxy
## built from the working tree, `go get` each (and all together) into a fresh consumer module
## with no replace directive, build and run it, and check that the consumer's go line and
## Kubernetes libraries stay at what the modules declare (test/release, see RELEASING.md).
release-check:
	cd test/release && $(GO) run . -repo ../.. -version $(RELEASE_VERSION) $(PUBLISHED_MODULES)

## integration: build (or reuse cached) etcd and kube-apiserver from Go modules, then run
## test/integration against them. See README.md, "Integration tests".
integration:
	test/integration/run.sh

clean:
	rm -rf $(BIN) coverage.out
