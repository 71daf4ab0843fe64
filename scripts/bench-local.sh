#!/usr/bin/env bash
# Figures for the local bench (issue 3), printed as a summary at the end:
#   cold      the quick profile end to end with empty caches (pip, k6 build, dataset)
#   warm      the same again, caches warm: goal < 15 minutes
#   aa        A/A: the same version on both sides, 3 gates (unbounded test); must not
#             fail; spread of supported users = (max - min) / mean, goal <= 10 %
#   slowdown  a candidate with an injected regression (caches shrunk) must be reported
#             worse on the metrics it affects (bounded test)
# Usage: bash scripts/bench-local.sh [cold,warm,aa,slowdown]   (default: all four)
# Env: BASELINE, CANDIDATE, CONFIG, OUT (reports root), AA_RUNS, SLOWDOWN (a k=v override),
#      LOADGATE_CACHE_DIR (an already warm cache: skips the warm-up before the warm part).
set -euo pipefail
cd "$(dirname "$0")/.."

PARTS="${1:-cold,aa,slowdown,warm}"
BASELINE="${BASELINE:-1.162.0}"
CANDIDATE="${CANDIDATE:-1.163.2}"
CONFIG="${CONFIG:-examples/local-synapse.yml}"
OUT="${OUT:-reports/bench-local}"
AA_RUNS="${AA_RUNS:-3}"
SLOWDOWN="${SLOWDOWN:-caches.global_factor=0.01}"
mkdir -p "$OUT"
SUMMARY="$OUT/summary.txt"
: >"$SUMMARY"
say() { printf '%s\n' "$*" | tee -a "$SUMMARY"; }

# Runs one gate; prints "<exit code> <seconds>". The gate's own output goes to <dir>.log.
gate() {
  local dir="$1"
  shift
  local start end code=0
  start=$(date +%s)
  npx --no-install loadgate run --config "$CONFIG" --out "$dir" "$@" >"$dir.log" 2>&1 || code=$?
  end=$(date +%s)
  echo "$code $((end - start))"
}

verdict_of() { node -e 'const v=require(process.argv[1]); console.log(v.verdict + ": " + v.summary)' "$(realpath "$1/verdict.json")"; }

# "<version>" supported users of every unbounded result in a report folder, one per line.
supported_users() {
  node -e '
    const fs = require("fs"), path = require("path");
    const dir = path.join(process.argv[1], "results");
    for (const f of fs.readdirSync(dir).sort()) {
      const r = JSON.parse(fs.readFileSync(path.join(dir, f), "utf8"));
      if (r.test.type === "unbounded") console.log(`${f} ${r.status} ${r.supportedUsers ?? "-"}`);
    }' "$1"
}

has() { [[ ",$PARTS," == *",$1,"* ]]; }

COLD_CACHE=""
if has cold; then
  COLD_CACHE=$(mktemp -d /tmp/loadgate-cold-cache-XXXXXX)
  say "== cold: empty cache $COLD_CACHE, $BASELINE vs $CANDIDATE"
  read -r code secs < <(LOADGATE_CACHE_DIR="$COLD_CACHE" gate "$OUT/cold" --baseline "$BASELINE" --candidate "$CANDIDATE")
  say "cold: exit $code, $((secs / 60)) min $((secs % 60)) s; $(verdict_of "$OUT/cold")"
  grep -E '^== ' "$OUT/cold.log" | sed 's/^/  /' | tee -a "$SUMMARY"
  # The other parts reuse the caches the cold run filled.
  export LOADGATE_CACHE_DIR="$COLD_CACHE"
fi

if has aa; then
  say "== A/A: $BASELINE on both sides, $AA_RUNS gates, unbounded test"
  all=()
  for i in $(seq 1 "$AA_RUNS"); do
    read -r code secs < <(gate "$OUT/aa-$i" --baseline "$BASELINE" --candidate "$BASELINE" --tests unbounded)
    say "A/A $i: exit $code ($([ "$code" = 1 ] && echo 'FAIL: must not happen' || echo 'not failed')), $((secs / 60)) min $((secs % 60)) s; $(verdict_of "$OUT/aa-$i")"
    while read -r file status users; do
      say "  $file $status supported users $users"
      [ "$status" = completed ] && all+=("$users")
    done < <(supported_users "$OUT/aa-$i")
  done
  if [ "${#all[@]}" -gt 0 ]; then
    say "A/A supported users: ${all[*]} -> $(node -e '
      const v = process.argv.slice(1).map(Number);
      const mean = v.reduce((a, b) => a + b, 0) / v.length;
      const spread = (Math.max(...v) - Math.min(...v)) / mean * 100;
      console.log(`mean ${mean.toFixed(1)}, max-min ${(Math.max(...v) - Math.min(...v)).toFixed(1)} = ${spread.toFixed(1)} % of the mean (goal <= 10 %)`);
    ' "${all[@]}")"
  fi
fi

if has slowdown; then
  say "== injected slowdown: $BASELINE vs $BASELINE with --candidate-set $SLOWDOWN (bounded test)"
  read -r code secs < <(gate "$OUT/slowdown" --baseline "$BASELINE" --candidate "$BASELINE" --candidate-set "$SLOWDOWN" --tests bounded)
  say "slowdown: exit $code, $((secs / 60)) min $((secs % 60)) s; $(verdict_of "$OUT/slowdown")"
  node -e '
    const v = require(process.argv[1]);
    for (const c of v.checks) {
      const d = c.deltaPct === null ? "n/a" : `${c.deltaPct > 0 ? "+" : ""}${c.deltaPct.toFixed(1)} %`;
      console.log(`  ${c.test} ${c.metric}: ${c.baseline} -> ${c.candidate} ${c.unit} (${d}) ${c.verdict}`);
    }' "$(realpath "$OUT/slowdown/verdict.json")" | tee -a "$SUMMARY"
fi

if has warm; then
  if [ -z "$COLD_CACHE" ] && [ -z "${LOADGATE_CACHE_DIR:-}" ]; then
    say "== warm-up (fills the default cache if it is empty; not timed)"
    gate "$OUT/warm-up" --baseline "$BASELINE" --candidate "$CANDIDATE" --tests bounded >/dev/null
  fi
  say "== warm: $BASELINE vs $CANDIDATE"
  read -r code secs < <(gate "$OUT/warm" --baseline "$BASELINE" --candidate "$CANDIDATE")
  say "warm: exit $code, $((secs / 60)) min $((secs % 60)) s (goal < 15 min); $(verdict_of "$OUT/warm")"
fi

if [ -n "$COLD_CACHE" ]; then rm -rf "$COLD_CACHE"; fi
say "summary written to $SUMMARY"
