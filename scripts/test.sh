#!/usr/bin/env bash
# The README's test command: set up a fresh machine, run the static checks, then the suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --tests
export PATH="$PWD/.cache/bin:$PATH"
export LOADGATE_CACHE_DIR="${LOADGATE_CACHE_DIR:-$PWD/.cache/loadgate}"
K6_VERSION="$(sed -n 's/^k6 go.k6.io\/k6@//p' scripts/go-tools.txt)"
export LOADGATE_K6_BIN="$LOADGATE_CACHE_DIR/k6/$K6_VERSION/k6"
echo "== type-check and lint"
npm run --silent typecheck
npm run --silent lint
echo "== dead code: knip (unused files, exports and dependencies; exports only the tests use)"
npm run --silent knip
echo "== formatting: prettier --check"
npm run --silent format:check
echo "== layering: no upward imports between src/ folders"
npm run --silent layers
echo "== no function over 80 lines in src/ but the allowlisted ones"
npm run --silent long-functions -- --check
echo "== generated files are up to date"
node bin/loadgate.js schema --check schema
bash scripts/check-dist.sh
echo "== workflows, actions and shell scripts"
bash scripts/lint-actions.sh
shellcheck -x -S warning action/lib/*.sh scripts/*.sh
echo "== Terraform: fmt, checkov, validate, test, apply and destroy on the moto emulator, IAM simulated"
bash scripts/check-infra.sh
echo "== tests, then the skip guard: every skip or todo listed with its reason in test/skips.json"
npm test
