#!/usr/bin/env bash
# Shared by the loadgate composite actions. Inputs arrive as environment variables
# (never interpolated into scripts); each script validates what it uses through the CLI.
set -euo pipefail

LOADGATE_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
export LOADGATE_ROOT
LOADGATE_WORK="${RUNNER_TEMP:-/tmp}/loadgate"
mkdir -p "$LOADGATE_WORK"
export LOADGATE_WORK

# One entry point: the committed esbuild bundle. It is complete (the PNG renderer is
# WebAssembly, inlined), so an action runs from a checkout with no `npm ci`.
loadgate() {
  node "$LOADGATE_ROOT/dist/loadgate.js" "$@"
}

# Writes a JSON file as one-line step output NAME (structured outputs are JSON).
set_output_json() {
  local name="$1" file="$2"
  node -e 'const fs=require("fs");process.stdout.write(JSON.stringify(JSON.parse(fs.readFileSync(process.argv[1],"utf8"))))' "$file" > "$LOADGATE_WORK/$name.oneline"
  printf '%s=%s\n' "$name" "$(cat "$LOADGATE_WORK/$name.oneline")" >> "${GITHUB_OUTPUT:-/dev/null}"
}

set_output() {
  case "$2" in *$'\n'* | *$'\r'*) echo "output $1 would span lines; refusing" >&2; return 1 ;; esac
  printf '%s=%s\n' "$1" "$2" >> "${GITHUB_OUTPUT:-/dev/null}"
}

# Seconds in a duration written as loadgate writes them ("1h30m", "90s"); fails on anything else.
duration_seconds() {
  local rest="$1" total=0
  [[ -n "$rest" && "$rest" =~ ^([0-9]{1,6}h)?([0-9]{1,6}m)?([0-9]{1,6}s)?$ ]] || return 1
  while [[ "$rest" =~ ^([0-9]+)([hms])(.*)$ ]]; do
    case "${BASH_REMATCH[2]}" in
      h) total=$((total + 10#${BASH_REMATCH[1]} * 3600)) ;;
      m) total=$((total + 10#${BASH_REMATCH[1]} * 60)) ;;
      s) total=$((total + 10#${BASH_REMATCH[1]})) ;;
    esac
    rest="${BASH_REMATCH[3]}"
  done
  printf '%s\n' "$total"
}

# The run-time budget of one job of a multi-job gate, in seconds: the runner's job limit
# (whole minutes, at least 30) less the 20 minutes kept for set-up (JOB_MARGIN_SEC in
# src/aws/job-limits.ts), or the job-budget duration given, which may lower it, not raise it.
job_budget_seconds() {
  local limit="$1" asked="${2:-}" most seconds
  if [[ ! "$limit" =~ ^[0-9]{2,4}$ ]] || [ "$limit" -lt 30 ]; then
    echo "::error::runner-limit-minutes: expected whole minutes, at least 30" >&2
    return 3
  fi
  most=$(((10#$limit - 20) * 60))
  if [ -z "$asked" ]; then printf '%s\n' "$most"; return 0; fi
  if ! seconds="$(duration_seconds "$asked")" || [ "$seconds" -le 0 ] || [ "$seconds" -gt "$most" ]; then
    echo "::error::run-job-budget: expected a duration such as 4h30m or 90s, above 0 and at most runner-limit-minutes less 20 minutes (${most}s)" >&2
    return 3
  fi
  printf '%s\n' "$seconds"
}

# A path inside the workspace: plain characters, no "..".
safe_path() {
  local value="$1" name="$2"
  if [[ ! "$value" =~ ^[A-Za-z0-9_.][A-Za-z0-9._/-]*$ ]] || [[ "/$value/" == *"/../"* ]]; then
    echo "::error::$name: not an accepted path (letters, digits, . _ - /, no ..)" >&2
    return 1
  fi
}

# Runs a verdict-giving command (run, compare) and sets the outputs exit-code,
# report-dir ($LG_OUT) and verdict. 0/1/2 are verdicts, not failures of the step;
# anything else (3: bad input) fails the step.
run_for_verdict() {
  local code
  set +e
  loadgate "$@"
  code=$?
  set -e
  set_output exit-code "$code"
  set_output report-dir "$LG_OUT"
  case "$code" in
    0) set_output verdict pass ;;
    1) set_output verdict fail ;;
    2) set_output verdict inconclusive ;;
    *) echo "::error::loadgate $1 exited with $code" >&2; exit "$code" ;;
  esac
}
