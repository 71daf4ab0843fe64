#!/usr/bin/env bash
# The README's main job: set up a fresh machine and run the local gate with its default
# target (Synapse), in duets. Extra arguments go to `loadgate run`, e.g. --max-repeats 4.
# LOADGATE_CONFIG=examples/local-synapse.yml runs the sequential profile instead.
set -euo pipefail
cd "$(dirname "$0")/.."
BASELINE="${LOADGATE_BASELINE:-1.162.0}"
CANDIDATE="${LOADGATE_CANDIDATE:-1.163.2}"
CONFIG="${LOADGATE_CONFIG:-examples/local-synapse-duet.yml}"
OUT="${LOADGATE_OUT:-reports/local/${BASELINE}-vs-${CANDIDATE}}"
bash scripts/setup.sh
export PATH="$PWD/.cache/bin:$PATH"
export LOADGATE_CACHE_DIR="${LOADGATE_CACHE_DIR:-$PWD/.cache/loadgate}"
K6_VERSION="$(sed -n 's/^k6 go.k6.io\/k6@//p' scripts/go-tools.txt)"
export LOADGATE_K6_BIN="$LOADGATE_CACHE_DIR/k6/$K6_VERSION/k6"
exec npx --no-install loadgate run --config "$CONFIG" \
  --baseline "$BASELINE" --candidate "$CANDIDATE" --out "$OUT" "$@"
