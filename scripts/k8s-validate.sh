#!/usr/bin/env bash
# Renders Kubernetes manifests (`corobench k8s render`) for the test fixture
# specs (cleartext with the pods `corobench k8s run` makes, and over TLS with
# its Secret) and every shipped suite, and checks them offline against the
# Kubernetes API's Go types with tools/k8s-validate (kubectl's own
# validation needs a server to download the schema from). Skipped, saying
# so, where Go is missing.
#
#   scripts/k8s-validate.sh [COROBENCH]   default: target/release/corobench
set -euo pipefail
cd "$(dirname "$0")/.."

corobench=${1:-target/release/corobench}
if ! command -v go >/dev/null 2>&1; then
    echo "k8s-validate: skipped: Go is not installed (tools/k8s-validate needs it)"
    exit 0
fi
[ -x "$corobench" ] || { echo "k8s-validate: $corobench is missing: build it first (make build)" >&2; exit 1; }

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

"$corobench" k8s render crates/corobench/tests/fixtures/k8s/spec.toml \
    --targets-dir crates/corobench-target/tests/fixtures/targets \
    --start-at 4102444800 --pods -o "$out/fixture" >/dev/null
# Over TLS: the Secret with the target's certificate, and the pods' mounts.
"$corobench" k8s render crates/corobench/tests/fixtures/k8s/tls-spec.toml \
    --targets-dir crates/corobench-target/tests/fixtures/targets \
    --start-at 4102444800 -o "$out/fixture-tls" >/dev/null 2>"$out/fixture-tls.err"
ls "$out"/fixture-tls/scenario-*/05-tls-secret.json >/dev/null \
    || { echo "k8s-validate: the TLS fixture rendered no Secret" >&2; cat "$out/fixture-tls.err" >&2; exit 1; }
for suite in suites/*.toml; do
    name=$(basename "$suite" .toml)
    # Render refuses, saying why, what a layout cannot run: a suite of
    # programs alone, a capacity search, servers defined in the spec.
    if ! "$corobench" k8s render "$suite" -o "$out/$name" >/dev/null 2>"$out/$name.err"; then
        if grep -q "no scenario of the spec can run as a Kubernetes layout" "$out/$name.err"; then
            echo "k8s-validate: $name: no server scenarios, nothing to render"
            continue
        fi
        if grep -q -e "searches capacity" -e "cannot start a server defined in the spec" "$out/$name.err"; then
            echo "k8s-validate: $name: refused as it should be: $(head -c 120 "$out/$name.err")"
            continue
        fi
        cat "$out/$name.err" >&2
        exit 1
    fi
done

(cd tools/k8s-validate && go test ./... && go run . "$out")
