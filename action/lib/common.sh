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

# This runner's public IPv4 address: LG_CONTROLLER_IP when given, else asked of
# checkip.amazonaws.com. Every job runs on its own runner with its own address.
runner_address() {
  local ip="${LG_CONTROLLER_IP:-}"
  if [ -z "$ip" ]; then
    ip="$(curl -fsS --retry 3 --max-time 10 https://checkip.amazonaws.com | tr -d '[:space:]')"
  fi
  if [[ ! "$ip" =~ ^([0-9]{1,3}\.){3}[0-9]{1,3}$ ]]; then
    echo "::error::controller address: expected an IPv4 address, got '${ip:0:40}' (set controller-ip, or check https://checkip.amazonaws.com)" >&2
    return 3
  fi
  printf '%s\n' "$ip"
}

set_output() {
  case "$2" in *$'\n'* | *$'\r'*) echo "output $1 would span lines; refusing" >&2; return 1 ;; esac
  printf '%s=%s\n' "$1" "$2" >> "${GITHUB_OUTPUT:-/dev/null}"
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
