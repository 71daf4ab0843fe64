#!/usr/bin/env bash
# `npm test`: runs the test files named (all of test/**/*.test.ts by default) once, with
# node's usual console output, while a second reporter records every result for the skip
# guard (scripts/skip-guard/check.ts), which then fails on a skip or todo that
# test/skips.json does not list with its reason. Under CI=true a listed test that no longer
# skips fails too.
# Environment: LOADGATE_SKIP_ALLOWLIST (default test/skips.json).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$#" -gt 0 ]; then
  files=("$@")
else
  mapfile -t files < <(find test -name '*.test.ts' | sort)
fi

# The console reporter node would pick by itself: spec on a terminal and from node 23 on,
# TAP otherwise. Naming a second reporter turns that default off, so it is named here.
console=tap
if [ -t 1 ] || [ "$(node -p 'process.versions.node.split(".")[0]')" -ge 23 ]; then console=spec; fi

results="$(mktemp -t loadgate-test-results.XXXXXX)"
trap 'rm -f "$results"' EXIT

status=0
node --import tsx --test --test-concurrency=1 \
  --test-reporter="$console" --test-reporter-destination=stdout \
  --test-reporter=./scripts/skip-guard/reporter.js --test-reporter-destination="$results" \
  "${files[@]}" || status=$?

stale=warn
if [ "${CI:-}" = true ]; then stale=fail; fi
guard=0
node --import tsx scripts/skip-guard/check.ts --results "$results" \
  --allowlist "${LOADGATE_SKIP_ALLOWLIST:-test/skips.json}" --stale "$stale" || guard=$?
if [ "$status" -ne 0 ]; then exit "$status"; fi
exit "$guard"
