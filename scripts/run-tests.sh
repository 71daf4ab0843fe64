#!/usr/bin/env bash
# `npm test`: runs the test files named (all of test/**/*.test.ts by default) once, with
# node's usual console output, while a second reporter records every result for the skip
# guard (scripts/skip-guard/check.ts), which then fails on a skip or todo that
# test/skips.json does not list with its reason. Under CI=true a listed test that no longer
# skips fails too.
# Two groups: the self-contained files run concurrently, one per core; then the files that
# start real programs or fill the shared cache (test/e2e/, test/integration/ and those listed
# in test/serial.txt, which states the rule) run one at a time, so they neither race nor
# disturb each other's measurements.
# Environment: LOADGATE_SKIP_ALLOWLIST (default test/skips.json), LOADGATE_TEST_CONCURRENCY
# (the first group's files at once; default the number of cores).
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

mapfile -t listed < <(sed -e 's/#.*//' -e 's/[[:space:]].*//' -e '/^$/d' test/serial.txt)
for file in "${listed[@]}"; do
  [ -f "$file" ] || { echo "run-tests: test/serial.txt lists $file, which does not exist" >&2; exit 1; }
done
parallel=()
serial=()
for file in "${files[@]}"; do
  case "$file" in
    test/e2e/* | test/integration/*) serial+=("$file") ;;
    *) if printf '%s\n' "${listed[@]}" | grep -qxF -- "$file"; then serial+=("$file"); else parallel+=("$file"); fi ;;
  esac
done

results="$(mktemp -t loadgate-test-results.XXXXXX)"
group_results="$(mktemp -t loadgate-test-group.XXXXXX)"
trap 'rm -f "$results" "$group_results"' EXIT

status=0
run_group() {
  local concurrency=$1
  shift
  [ "$#" -gt 0 ] || return 0
  node --import tsx --test --test-concurrency="$concurrency" \
    --test-reporter="$console" --test-reporter-destination=stdout \
    --test-reporter=./scripts/skip-guard/reporter.js --test-reporter-destination="$group_results" \
    "$@" || status=$?
  cat "$group_results" >> "$results"
}
run_group "${LOADGATE_TEST_CONCURRENCY:-$(nproc)}" "${parallel[@]}"
run_group 1 "${serial[@]}"

stale=warn
if [ "${CI:-}" = true ]; then stale=fail; fi
guard=0
node --import tsx scripts/skip-guard/check.ts --results "$results" \
  --allowlist "${LOADGATE_SKIP_ALLOWLIST:-test/skips.json}" --stale "$stale" || guard=$?
if [ "$status" -ne 0 ]; then exit "$status"; fi
exit "$guard"
