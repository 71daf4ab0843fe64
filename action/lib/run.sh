#!/usr/bin/env bash
# Runs the gate's tests for baseline and candidate (interleaved) and compares them.
# env: LG_CONFIG, LG_BASELINE, LG_CANDIDATE, LG_TESTS, LG_REPEATS, LG_OUT; on the AWS bench
# also LG_BENCH_FILE (provision's `bench-file` output) and LG_USERS_FILE (the dataset's
# "login password" file). A fail or inconclusive verdict is an outcome here, not a step
# failure: publish reports it and fails the job. Bad input (3) or a crash fails the step.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
safe_path "$LG_CONFIG" config
safe_path "$LG_OUT" out

args=(run --config "$LG_CONFIG" --baseline "$LG_BASELINE" --candidate "$LG_CANDIDATE" --out "$LG_OUT")
if [ -n "${LG_TESTS:-}" ]; then args+=(--tests "$LG_TESTS"); fi
if [ -n "${LG_REPEATS:-}" ]; then args+=(--repeats "$LG_REPEATS"); fi
# The bench file lives under RUNNER_TEMP (outside the workspace), so it is not a
# workspace path; `loadgate run` parses and checks it.
if [ -n "${LG_BENCH_FILE:-}" ]; then args+=(--bench-file "$LG_BENCH_FILE"); fi
if [ -n "${LG_USERS_FILE:-}" ]; then
  safe_path "$LG_USERS_FILE" users-file
  args+=(--users-file "$LG_USERS_FILE")
fi

run_for_verdict "${args[@]}"
