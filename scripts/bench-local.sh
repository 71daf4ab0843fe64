#!/usr/bin/env bash
# Figures for the local bench, printed as a summary at the end:
#   cold      the quick profile end to end with empty caches (pip, k6 build, dataset)
#   warm      the same again, caches warm: goal < 15 minutes
#   aa        A/A: the same version on both sides, 3 gates (unbounded test, 6 runs); must
#             not fail; per-run supported users, estimate half-width and wall time, then
#             mean, sd (goal: <= 2 %) and spread. With CONFIG_BEFORE set to a reference
#             profile (e.g. an older examples/local-synapse.yml, from git show), the same
#             A/A runs with it too, and the means and wall times are compared (goals: at
#             most 60 % of the reference's unbounded wall time, means within 3 %)
#   slowdown  a candidate with an injected regression (caches shrunk) must be reported
#             worse on the metrics it affects (bounded test)
# Usage: bash scripts/bench-local.sh [cold,warm,aa,slowdown]   (default: all four)
# Env: BASELINE, CANDIDATE, CONFIG, CONFIG_BEFORE, OUT (reports root), AA_RUNS, SLOWDOWN (a k=v override),
#      LOADGATE_CACHE_DIR (an already warm cache: skips the warm-up before the warm part).
set -euo pipefail
cd "$(dirname "$0")/.."

PARTS="${1:-cold,aa,slowdown,warm}"
BASELINE="${BASELINE:-1.162.0}"
CANDIDATE="${CANDIDATE:-1.163.2}"
CONFIG="${CONFIG:-examples/local-synapse.yml}"
CONFIG_BEFORE="${CONFIG_BEFORE:-}"
OUT="${OUT:-data/experiments/bench-local}"
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
  npx --no-install loadgate run --config "${GATE_CONFIG:-$CONFIG}" --out "$dir" "$@" >"$dir.log" 2>&1 || code=$?
  end=$(date +%s)
  echo "$code $((end - start))"
}

verdict_of() { node -e 'const v=require(process.argv[1]); console.log(v.verdict + ": " + v.summary)' "$(realpath "$1/verdict.json")"; }

# Every unbounded result in a report folder, one per line:
# "<file> <status> <supported users> <run seconds> <estimator/half-width/start>".
supported_users() {
  node -e '
    const fs = require("fs"), path = require("path");
    const dir = path.join(process.argv[1], "results");
    for (const f of fs.readdirSync(dir).sort()) {
      const r = JSON.parse(fs.readFileSync(path.join(dir, f), "utf8"));
      if (r.test.type !== "unbounded") continue;
      const secs = Math.round((Date.parse(r.finishedAt) - Date.parse(r.startedAt)) / 1000);
      const c = r.capacity;
      const how = c ? `${c.estimator}${c.halfWidthPct !== undefined ? "_±" + c.halfWidthPct + "%" : ""}_start=${c.startUsers}(${c.startSource.replace(/\s+/g, "_")})` : "window-mean";
      console.log(`${f} ${r.status} ${r.supportedUsers ?? "-"} ${secs} ${how}`);
    }' "$1"
}

# "mean sd% max-min% meanSeconds" of "<users> <seconds>" lines on stdin.
aa_stats() {
  node -e '
    const rows = require("fs").readFileSync(0, "utf8").trim().split("\n").filter(Boolean).map((l) => l.split(" ").map(Number));
    const u = rows.map((r) => r[0]), s = rows.map((r) => r[1]);
    const mean = u.reduce((a, b) => a + b, 0) / u.length;
    const sd = Math.sqrt(u.reduce((a, x) => a + (x - mean) ** 2, 0) / Math.max(1, u.length - 1));
    const secs = s.reduce((a, b) => a + b, 0) / s.length;
    console.log(`${mean.toFixed(2)} ${(100 * sd / mean).toFixed(2)} ${(100 * (Math.max(...u) - Math.min(...u)) / mean).toFixed(1)} ${secs.toFixed(0)} ${u.length}`);
  '
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

# A/A gates with GATE_CONFIG; prints "mean sd% spread% meanRunSeconds runs" last.
aa_runs() {
  local tag="$1" rows=""
  for i in $(seq 1 "$AA_RUNS"); do
    read -r code secs < <(gate "$OUT/aa$tag-$i" --baseline "$BASELINE" --candidate "$BASELINE" --tests unbounded)
    say "A/A$tag $i: exit $code ($([ "$code" = 1 ] && echo 'FAIL: must not happen' || echo 'not failed')), $((secs / 60)) min $((secs % 60)) s; $(verdict_of "$OUT/aa$tag-$i")" >&2
    while read -r file status users runsecs how; do
      say "  $file $status supported users $users, unbounded run $runsecs s, $how" >&2
      if [ "$status" = completed ]; then rows+="$users $runsecs"$'\n'; fi
    done < <(supported_users "$OUT/aa$tag-$i")
  done
  if [ -n "$rows" ]; then printf '%s' "$rows" | aa_stats; else echo "0 0 0 0 0"; fi
}

if has aa; then
  say "== A/A: $BASELINE on both sides, $AA_RUNS gates, unbounded test ($CONFIG)"
  read -r mean sd spread secs n < <(GATE_CONFIG="$CONFIG" aa_runs "" | tail -n 1)
  say "A/A ($CONFIG): $n runs, mean $mean supported users, per-run sd $sd % (goal <= 2 %), max-min $spread % of the mean, unbounded run $secs s on average"
  if [ -n "$CONFIG_BEFORE" ]; then
    say "== A/A with the reference profile: $CONFIG_BEFORE"
    read -r bmean bsd bspread bsecs bn < <(GATE_CONFIG="$CONFIG_BEFORE" aa_runs "-before" | tail -n 1)
    say "A/A ($CONFIG_BEFORE): $bn runs, mean $bmean, per-run sd $bsd %, max-min $bspread %, unbounded run $bsecs s on average"
    say "this profile vs the reference: mean $(node -e 'console.log((100 * (process.argv[1] / process.argv[2] - 1)).toFixed(2))' "$mean" "$bmean") % (goal within ±3 %), unbounded wall time $(node -e 'console.log((100 * process.argv[1] / process.argv[2]).toFixed(0))' "$secs" "$bsecs") % of the reference's (goal <= 60 %)"
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
