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

bench: build
	$(GO) test -run '^$$' -bench . -benchmem ./verifier/...
	$(GO) test -run '^$$' -bench LoadVsVegeta -benchtime 1x -v ./harness/load/
	$(GO) test -run '^$$' -bench 'SSEFanIn|IdleConsumers' -benchtime 1x ./harness/consumer/
	$(GO) test -run '^$$' -bench VsRawInsert -benchtime 1x -v ./reference-impl/api/
	@d=$$(mktemp -d) && trap 'rm -rf "$$d"' EXIT && \
	echo "bench: generating a ~10M-record ledger in $$d" && \
	$(BIN)/seqgate gen-ledger --seed 1 --tenants 6 --consumers-per-tenant 2 --events $(BENCH_EVENTS) > $$d/bench.jsonl && \
	$(BIN)/seqgate verify --decode-only $$d/bench.jsonl 2> $$d/floor.txt && \
	{ $(BIN)/seqgate verify --stats $$d/bench.jsonl > /dev/null 2> $$d/verify.txt; test $$? -le 2; } && \
	cat $$d/floor.txt $$d/verify.txt && \
	awk -v acked=$(BENCH_EVENTS) '/^stats:/ { for (i = 3; i <= NF; i++) { split($$i, kv, "="); v[$$2, kv[1]] = kv[2] } } \
	END { printf "bench: verify/floor time ratio %.2f (goal <= 1.25), CPU ratio %.2f (verify %.0f records/s, floor %.0f records/s, verify peak RSS %s MiB = %.0f bytes per acked mutation (goal <= 64))\n", \
	v["verify", "seconds"] / v["decode-only", "seconds"], v["verify", "cpu_seconds"] / v["decode-only", "cpu_seconds"], \
	v["verify", "records_per_s"], v["decode-only", "records_per_s"], v["verify", "peak_rss_mib"], v["verify", "peak_rss_mib"] * 1048576 / acked }' \
	$$d/floor.txt $$d/verify.txt

clean:
	rm -rf $(BIN)
