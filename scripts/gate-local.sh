#!/usr/bin/env bash
# The README's main job: set up a fresh machine and run the local gate with its default
# target (Synapse), in duets. Extra arguments go to `loadgate run`, e.g. --max-repeats 4.
# LOADGATE_CONFIG=examples/local-synapse.yml runs the sequential profile instead.
# It writes under runs/local/ (git-ignored), so the checkout stays clean and the committed
# sample in reports/local/ is never written over; it warm-starts unbounded tests only from
# this machine's own earlier gates of the same profile (runs/local/<profile>/), whose
# history (runs/local/<profile>/history/) it appends its record to.
set -euo pipefail
cd "$(dirname "$0")/.."
BASELINE="${LOADGATE_BASELINE:-1.162.0}"
CANDIDATE="${LOADGATE_CANDIDATE:-1.163.2}"
CONFIG="${LOADGATE_CONFIG:-examples/local-synapse-duet.yml}"
PROFILE_RUNS="runs/local/$(basename "$CONFIG" .yml)"
OUT="${LOADGATE_OUT:-$PROFILE_RUNS/${BASELINE}-vs-${CANDIDATE}}"
bash scripts/setup.sh
export PATH="$PWD/.cache/bin:$PATH"
export LOADGATE_CACHE_DIR="${LOADGATE_CACHE_DIR:-$PWD/.cache/loadgate}"
K6_VERSION="$(sed -n 's/^k6 go.k6.io\/k6@//p' scripts/go-tools.txt)"
export LOADGATE_K6_BIN="$LOADGATE_CACHE_DIR/k6/$K6_VERSION/k6"
# The profile's folder holds its earlier gates (warm-start hints) and its history/, which
# each gate reads and appends its record to; the first gate on a machine creates it.
mkdir -p "$PROFILE_RUNS"
# LOADGATE_CREEP_ANCHOR (a release, or a pattern) adds the creep check: the change since it.
creep=()
if [ -n "${LOADGATE_CREEP_ANCHOR:-}" ]; then creep=(--creep-anchor "$LOADGATE_CREEP_ANCHOR"); fi
exec npx --no-install loadgate run --config "$CONFIG" \
  --baseline "$BASELINE" --candidate "$CANDIDATE" --out "$OUT" --history "$PROFILE_RUNS" "${creep[@]}" "$@"
