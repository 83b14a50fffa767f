# inferload's build and test entry points. `make test` is what CI runs.
GO          ?= go
# staticcheck is pinned by its module's semver tag (the proxy serves v0.8.2,
# not the 2026.2.2 release name); `staticcheck -version` prints both, as
# "staticcheck 2026.2.2 (0.8.2)", so the check matches the tag without its v.
STATICCHECK_VERSION ?= v0.8.2
STATICCHECK_PRINTS  := ($(patsubst v%,%,$(STATICCHECK_VERSION)))
GOBIN       ?= $(shell $(GO) env GOPATH)/bin
STATICCHECK := $(GOBIN)/staticcheck

.PHONY: test lint tools test-deps engines build image demo bench fuzz screenshots

## test: lint, then every test with the race detector (what CI runs); capacity,
## which starts no goroutine (capacity/goroutines_test.go keeps it so), runs its
## long virtual-time fits without it: the detector finds nothing there and made
## the package take 9 minutes
test: lint test-deps engines
	$(GO) test -race -count=1 -timeout 600s $$($(GO) list ./... | grep -v '/capacity$$')
	$(GO) test -count=1 -timeout 600s ./capacity

## test-deps: install what integration tests need beyond Go (chromium, prometheus); quiet when present
test-deps:
	@./scripts/install-test-deps.sh

## engines: build llama.cpp's llama-server and write its test models, cached outside the repo (docs/testing.md)
engines:
	@./scripts/install-llamacpp.sh
	@./scripts/llamacpp-model.sh

## lint: gofmt, go vet and staticcheck must all be clean
lint: tools
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(STATICCHECK) ./...

## tools: install the pinned linters (Go module proxy only)
tools:
	@if ! $(STATICCHECK) -version 2>/dev/null | grep -qF "$(STATICCHECK_PRINTS)"; then \
	  echo "installing staticcheck $(STATICCHECK_VERSION)"; \
	  GOBIN=$(GOBIN) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION); \
	  $(STATICCHECK) -version | grep -qF "$(STATICCHECK_PRINTS)" || \
	    { echo "staticcheck in $(GOBIN) is not $(STATICCHECK_VERSION): $$($(STATICCHECK) -version)"; exit 1; }; \
	fi

## build: a static binary in ./inferload
build:
	CGO_ENABLED=0 $(GO) build -o inferload ./cmd/inferload

## image: the container image as an OCI archive, built without Docker (inferload-oci.tar; docs/distributed.md)
image:
	CGO_ENABLED=0 $(GO) build -trimpath -o inferload ./cmd/inferload
	$(GO) run ./internal/tools/image -bin inferload -out inferload-oci.tar

## demo: the main job (simulated server + mixed workload + summary)
demo:
	$(GO) run ./cmd/inferload demo

## screenshots: regenerate docs/img/ (demo runs + headless chromium, see docs/reading-the-report.md)
screenshots: test-deps
	./scripts/screenshots.sh docs/img

## bench: the documented benchmarks, one package at a time (see BENCHMARKS.md)
bench:
	./scripts/bench.sh

## fuzz: run every fuzz target (found by go test -list, none missed) FUZZTIME each; scripts/keep-fuzz-corpus.sh keeps what it grew
FUZZTIME ?= 30s
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$t"; \
	    $(GO) test -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done