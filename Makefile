# seqgate: the two commands of the README are `make run` (the main job) and `make test` (the tests).
GO      ?= go
BIN     := bin
PKGS    := ./...

.PHONY: build test lint run bench clean ci-scenarios power power-ci

# -buildvcs=auto: stamp the git revision into the binaries (their provenance) even where GOFLAGS turns it off.
build:
	$(GO) build -buildvcs=auto -o $(BIN)/seqgate ./cmd/seqgate
	$(GO) build -buildvcs=auto -o $(BIN)/eventlogd ./cmd/eventlogd

lint:
	$(GO) vet $(PKGS)
	$(GO) tool staticcheck $(PKGS)

test: lint
	$(GO) test -race -count=1 -timeout 20m $(PKGS)

run: build
	$(BIN)/seqgate run scenarios/smoke.yaml

# The CI variants of the stall, meta-DB outage and crash scenarios (15-25 s of load each), one after
# the other (2 cores); every one runs, and the target fails if any verdict is not a pass.
CI_SCENARIOS := $(sort $(wildcard scenarios/ci/*.yaml))
ci-scenarios: build
	@fail=0; for s in $(CI_SCENARIOS); do \
	  echo "ci-scenarios: $$s"; \
	  d=runs/ci/$$(basename $$s .yaml); rm -rf $$d; \
	  $(BIN)/seqgate run $$s --out $$d || { echo "ci-scenarios: $$s FAILED (exit $$?)"; fail=1; }; \
	done; exit $$fail

# seqgate power: every seeded defect against its exposing scenario beside the correct build
# (docs/power.md). power-ci is the fast subset CI runs, one seed each.
power: build
	$(BIN)/seqgate power --seeds 3 --out runs/power

power-ci: build
	rm -rf runs/power-ci && $(BIN)/seqgate power --ci --seeds 1 --out runs/power-ci

# BENCH_EVENTS: the acked event-producing mutations of make bench's generated ledger (~4.1 records each).
BENCH_EVENTS ?= 2440000
# BENCH_PAIRS: how many times make bench times the floor and then verify, one right after the other;
# it prints the median of the pairs' ratios, since a shared machine's speed drifts between runs.
BENCH_PAIRS ?= 3

bench: build
	$(GO) test -run '^$$' -bench . -benchmem ./verifier/...
	$(GO) test -run '^$$' -bench LoadVsVegeta -benchtime 1x -v ./harness/load/
	$(GO) test -run '^$$' -bench 'SSEFanIn|IdleConsumers' -benchtime 1x ./harness/consumer/
	$(GO) test -run '^$$' -bench VsRawInsert -benchtime 1x -v ./reference-impl/api/
	@d=$$(mktemp -d) && trap 'rm -rf "$$d"' EXIT && \
	echo "bench: generating a ~10M-record ledger in $$d" && \
	$(BIN)/seqgate gen-ledger --seed 1 --tenants 6 --consumers-per-tenant 2 --events $(BENCH_EVENTS) > $$d/bench.jsonl && \
	for i in $$(seq $(BENCH_PAIRS)); do \
	$(BIN)/seqgate verify --decode-only $$d/bench.jsonl 2>> $$d/stats.txt && \
	{ $(BIN)/seqgate verify --stats $$d/bench.jsonl > /dev/null 2>> $$d/stats.txt; test $$? -le 2; } || exit 1; \
	done && \
	grep '^stats:' $$d/stats.txt && \
	awk -v acked=$(BENCH_EVENTS) -f scripts/bench-verify.awk $$d/stats.txt

clean:
	rm -rf $(BIN)
