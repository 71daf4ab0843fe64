#!/usr/bin/env bash
# Runs the gate's tests for baseline and candidate (interleaved) and compares them.
# env: LG_CONFIG, LG_BASELINE, LG_CANDIDATE, LG_TESTS, LG_REPEATS, LG_OUT.
# A fail or inconclusive verdict is an outcome here, not a step failure: publish reports
# it and fails the job. Bad input (3) or a crash fails the step at once.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
ensure_runtime_deps
safe_path "$LG_CONFIG" config
safe_path "$LG_OUT" out

args=(run --config "$LG_CONFIG" --baseline "$LG_BASELINE" --candidate "$LG_CANDIDATE" --out "$LG_OUT")
if [ -n "${LG_TESTS:-}" ]; then args+=(--tests "$LG_TESTS"); fi
if [ -n "${LG_REPEATS:-}" ]; then args+=(--repeats "$LG_REPEATS"); fi

run_for_verdict "${args[@]}"
