# rdmamesh — see README.md. `make demo` and `make test` need only Go.
GO        ?= go
BIN       ?= bin/rdmamesh
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT    ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS   := -X main.version=$(VERSION) -X main.commit=$(COMMIT)
# The verbs engine is built in when libibverbs' headers are present.
HAVE_VERBS := $(shell test -f /usr/include/infiniband/verbs.h && echo yes)
TAGS      ?= $(if $(HAVE_VERBS),verbs,)
DEMO_ARGS ?= --nodes 16

.PHONY: all build build-noverbs test testrace lint vet fmt-check tidy-check demo demo-once demo-scale clean fuzz docs bench gobench bench-judge bench-links bench-live-links

all: lint test build

build:
	$(GO) build -tags '$(TAGS)' -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/rdmamesh

build-noverbs:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/rdmamesh

# The test command the README and CI use.
test:
	$(GO) test -count=1 ./...
	@if [ -n "$(HAVE_VERBS)" ]; then $(GO) vet -tags verbs ./internal/fabric/verbs/ ./cmd/rdmamesh/ && $(GO) test -count=1 -tags verbs ./internal/fabric/verbs/; fi

testrace:
	$(GO) test -count=1 -race ./...

# golangci-lint at a pinned version, installed into bin/ by go install on
# first use; .golangci.yml names the linters.
GOLANGCI_VERSION ?= v2.15.0
GOLANGCI := bin/golangci-lint-$(GOLANGCI_VERSION)
comma := ,

lint: vet fmt-check $(GOLANGCI)
	$(GOLANGCI) run --build-tags '$(subst $(eval) ,$(comma),$(strip e2e $(TAGS)))' ./...

$(GOLANGCI):
	@mkdir -p bin
	GOBIN=$(CURDIR)/bin/golangci-tmp $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_VERSION)
	mv bin/golangci-tmp/golangci-lint $@ && rmdir bin/golangci-tmp

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

tidy-check:
	$(GO) mod tidy -diff

# Short fuzz runs of every fuzz target (CI runs them too). The budget is an
# execution count, not a duration: Go 1.26's fuzz coordinator can report a
# spurious "context deadline exceeded" when a -fuzztime duration expires
# (golang/go#75804, fixed in Go 1.27).
FUZZ_EXECS ?= 20000x
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list 'Fuzz.*' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "fuzz $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZ_EXECS) $$pkg || exit 1; \
	  done; \
	done

# Coordinator + 16 simulated workers + web UI on http://127.0.0.1:8080/.
demo: build-noverbs
	$(BIN) demo $(DEMO_ARGS)

demo-once: build-noverbs
	$(BIN) demo $(DEMO_ARGS) --once --listen 127.0.0.1:0 --json bin/demo.json

# A 512-node demo sweep with default limits: the in-process workers' gossip
# and the connection pools must let it start, finish and judge (CI runs it).
demo-scale: build-noverbs
	$(BIN) demo --nodes 512 --once --listen 127.0.0.1:0 --log-level warn

# Scale harness (docs/scale.md): one coordinator on its real raft store and N
# simulated workers in-process, one quick sweep per size, a Markdown table.
# BENCH_NODES=128,256 picks sizes, BENCH_RUNS=3 reports medians, full mode
# (every test run) up to BENCH_FULL_MAX=256 nodes, control mode for all; see
# rigs/scale/cmd for the other knobs. Not part of `make test`.
bench:
	$(GO) run ./rigs/scale/cmd

# How well the matrix judges: seeded sweeps of the simulated fabric, clean
# and with every demo fault class at several strengths, on the noisy
# rxe-lab preset and a quiet one; precision and recall of the exclude list
# (rigs/judge). JUDGE_ARGS="-runs 50" for a quicker table.
bench-judge:
	$(GO) run ./rigs/judge/cmd $(JUDGE_ARGS)

# Link localization: random cable, link and switch faults (down, lossy,
# flapping, slow, one way, two at once) and healthy runs on simulated
# rail-optimized fat trees, 2-tier and 3-tier; recall and precision of the
# link suspects per fault type (rigs/links). LINKS_RUNS per fault type
# (default 20); LINKS_HUGE_RUNS on the 4,096 x 8 3-tier tree (default 1),
# where a run tests the 16.8 M pairs of each faulted plane: about 5
# CPU-minutes a plane, an hour of CPU for one run of every fault type.
LINKS_RUNS ?= 20
LINKS_HUGE_RUNS ?= 1
bench-links:
	$(GO) run ./rigs/links/cmd -runs $(LINKS_RUNS) -tree nodes=512,rails=8,leaf=32,spines=16 -preset roce-8x400
	$(GO) run ./rigs/links/cmd -runs $(LINKS_RUNS) -tree nodes=256,rails=8,leaf=16,spines=8,pods=4,cores=16 -preset roce-8x400
	$(GO) run ./rigs/links/cmd -runs $(LINKS_RUNS) -tree nodes=256,rails=8,leaf=16,spines=8,pods=4,cores=16,ll=ib -preset ib-8x400
	$(GO) run ./rigs/links/cmd -runs $(LINKS_HUGE_RUNS) -tree nodes=4096,rails=8,leaf=32,spines=16,pods=8,cores=16 -preset roce-8x400
	BENCH_NODES=4096 $(GO) test -run '^$$' -bench LinksHuge -benchtime 1x ./matrix/

# The live link watch (rigs/livelinks): random cables between switches of
# a 4,096 x 8 three-tier tree start dropping 2 % at a random moment, one at
# a time, and the seconds until the leader names them; then 2,000 windows
# of 1,024 x 8 with a cable flapping in spells (one episode each) and the
# footprint at start and end. LIVE_LINKS_ARGS="-runs 10 -soak 200" for a
# quicker run, "-oneway" for one-way loss.
bench-live-links:
	$(GO) run ./rigs/livelinks/cmd $(LIVE_LINKS_ARGS)

# Go micro-benchmarks of the scale-critical paths, with allocation counts.
gobench:
	$(GO) test -run '^$$' -bench 'AllPairs1024|ApplyRound|CodecRound|DispatchRound|SweepState1024|BuildHuge' -benchmem -benchtime 1x ./coordinator/... ./matrix
	$(GO) test -run '^$$' -bench 'RunTask8Rails|Summarize' -benchmem ./worker ./internal/probe

# Regenerate the configuration and metrics references (tests fail on drift).
docs:
	$(GO) run ./internal/config/docgen > docs/configuration.md
	$(GO) test -count=1 ./rigs/deploytest -run TestOperationsDoc -update

clean:
	rm -rf bin

-include lab/lab.mk
-include chaos.mk
-include slurm.mk
-include idle.mk

# Browser tests of the web UI in Debian's headless Chromium (installed when
# missing): a demo with faults injected, screenshots under bin/e2e/.
E2E_CHROMIUM = command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	{ echo "installing Debian's chromium for the browser tests"; apt-get update -qq && apt-get install -y -qq chromium >/dev/null; }
.PHONY: e2e bench-ui
e2e:
	@$(E2E_CHROMIUM)
	$(GO) vet -tags e2e ./web/e2e/
	$(GO) test -count=1 -tags e2e -run TestUI -v ./web/e2e/

# Navigation to first complete heatmap paint for synthetic 8-rail sweeps of
# BENCH_UI_NODES nodes (default 1024,4096; targets 1 s and 1.5 s), and the
# compact API's payload at 1,024. BENCH_UI_SWEEP=1 also loads the real
# matrix of a BENCH_UI_SWEEP_NODES (default 4096) control sweep from the
# coordinator's store (minutes; under a 5 GiB Go memory limit).
bench-ui:
	@$(E2E_CHROMIUM)
	$(GO) test -count=1 -timeout 30m -tags e2e -run '^$$' -bench 'FirstPaint$$' -benchtime 5x ./web/e2e/
	$(if $(BENCH_UI_SWEEP),$(GO) test -count=1 -timeout 30m -tags e2e -run '^$$' -bench 'FirstPaintAfterSweep$$' -benchtime 1x ./web/e2e/)
	$(GO) test -count=1 -run '^$$' -bench CompactPayload -benchtime 3x ./web/
