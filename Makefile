# seqgate: the two commands of the README are `make run` (the main job) and `make test` (the tests).
GO      ?= go
BIN     := bin
PKGS    := ./...

.PHONY: build test lint run bench clean

build:
	$(GO) build -o $(BIN)/seqgate ./cmd/seqgate
	$(GO) build -o $(BIN)/eventlogd ./cmd/eventlogd

lint:
	$(GO) vet $(PKGS)
	$(GO) tool staticcheck $(PKGS)

test: lint
	$(GO) test -race -count=1 -timeout 20m $(PKGS)

run: build
	$(BIN)/seqgate gen-ledger --seed 1 --tenants 6 --consumers-per-tenant 2 --events 20000 | $(BIN)/seqgate verify -

bench: build
	$(GO) test -run '^$$' -bench . -benchmem ./verifier/...

clean:
	rm -rf $(BIN)
