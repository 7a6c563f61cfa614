# corobench: `make bench` runs the default suite, `make test` runs every test.
# Both install what they need first (Debian packages as root, then each
# target's own registry when it is built).

CARGO ?= cargo
# Cargo's build folder (CI keeps one outside the clone).
BUILD_DIR := $(or $(CARGO_TARGET_DIR),target)
COROBENCH := $(BUILD_DIR)/release/corobench
# The checks below measure nothing, so they use the build the tests already
# made instead of a second, optimised build of the whole workspace.
CHECK_COROBENCH := $(BUILD_DIR)/debug/corobench
# The two Swoole builds scripts/swoole.sh keeps (one per socket engine),
# unless you name others: swoole-epoll and swoole-uring start PHP with them.
# Looked up when a recipe runs, so a build that `deps` has just made counts.
SWOOLE_BUILDS = $(or $(COROBENCH_CACHE),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/corobench)/swoole
swoole_ini_dir = $(shell [ -d '$(SWOOLE_BUILDS)/$(1).d' ] && echo '$(SWOOLE_BUILDS)/$(1).d')

.PHONY: bench test deps deps-test build check-build lint rust-test results-check target-tests k8s-validate verify clean help

help:
	@echo "make bench    install what is needed, build, run the default suite and print its table"
	@echo "make test     install what is needed, then lints, unit and end-to-end tests, and verify every target"

bench verify target-tests: export SWOOLE_EPOLL_INI_DIR ?= $(call swoole_ini_dir,epoll)
bench verify target-tests: export SWOOLE_URING_INI_DIR ?= $(call swoole_ini_dir,uring)

bench: deps build
	$(COROBENCH) run

test:
	@scripts/timed-steps.sh deps-test lint rust-test results-check target-tests k8s-validate verify

deps:
	@scripts/deps.sh bench

deps-test:
	@scripts/deps.sh test

build:
	$(CARGO) build --release --locked --bin corobench

check-build:
	$(CARGO) build --locked --bin corobench

lint:
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets --locked -- -D warnings

rust-test:
	$(CARGO) test --workspace --locked

# Every results page rebuilt from the committed run files in results/ alone,
# and compared with the committed page.
results-check: check-build
	COROBENCH=$(CHECK_COROBENCH) scripts/results-pages.sh --check

target-tests:
	scripts/target-tests.sh

# `corobench k8s render` manifests checked offline against the Kubernetes
# API's Go types (skipped where Go is missing).
k8s-validate: check-build
	scripts/k8s-validate.sh $(CHECK_COROBENCH)

# Every target that can run here, built and checked against the contract
# (PostgreSQL included); Swoole lights up where scripts/swoole.sh built it
# (or its extension is installed).
verify: check-build
	$(CHECK_COROBENCH) verify

clean:
	$(CARGO) clean
