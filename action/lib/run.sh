#!/usr/bin/env bash
# Runs the gate's tests for baseline and candidate (interleaved) and compares them, or
# with LG_MODE=calibrate runs `loadgate calibrate` (the candidate on both sides).
# env: LG_MODE, LG_CONFIG, LG_BASELINE, LG_CANDIDATE, LG_TESTS, LG_REPEATS, LG_MAX_REPEATS, LG_RESUME, LG_STOP_EARLY, LG_OUT; on the AWS bench
# also LG_BENCH_FILE (provision's `bench-file` output) and LG_USERS_FILE (the dataset's
# "login password" file). A fail or inconclusive verdict is an outcome here, not a step
# failure: publish reports it and fails the job. Bad input (3) or a crash fails the step.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
safe_path "$LG_CONFIG" config
safe_path "$LG_OUT" out

calibrate=false
case "${LG_MODE:-gate}" in
  gate | '') ;;
  calibrate) calibrate=true ;;
  *) echo "::error::mode: expected gate or calibrate" >&2; exit 3 ;;
esac
if [ "$calibrate" = true ]; then
  # The candidate on both sides for exactly LG_REPEATS pairs (check-inputs checked both).
  args=(calibrate --config "$LG_CONFIG" --version "$LG_CANDIDATE" --runs "$LG_REPEATS" --out "$LG_OUT")
  # The last run job: pairs its budget leaves are not lost, the model comes from those completed.
  if [ "${LG_STOP_EARLY:-false}" = true ]; then args+=(--stop-early); fi
else
  args=(run --config "$LG_CONFIG" --baseline "$LG_BASELINE" --candidate "$LG_CANDIDATE" --out "$LG_OUT")
  if [ -n "${LG_REPEATS:-}" ]; then args+=(--repeats "$LG_REPEATS"); fi
  if [ -n "${LG_MAX_REPEATS:-}" ]; then args+=(--max-repeats "$LG_MAX_REPEATS"); fi
fi
if [ -n "${LG_TESTS:-}" ]; then args+=(--tests "$LG_TESTS"); fi
# The bench file lives under RUNNER_TEMP (outside the workspace), so it is not a
# workspace path; `loadgate run` parses and checks it.
if [ -n "${LG_BENCH_FILE:-}" ]; then args+=(--bench-file "$LG_BENCH_FILE"); fi
if [ -n "${LG_USERS_FILE:-}" ]; then
  safe_path "$LG_USERS_FILE" users-file
  args+=(--users-file "$LG_USERS_FILE")
fi
# One job of a multi-job gate: continue from the results a previous job left in
# $LG_OUT/results, and start no run that would end past the job's budget (the limit less
# 20 minutes, or the lower job-budget; `loadgate run` checks both and refuses a higher
# budget); verdict.json then says next: repeat, and the next job continues.
if [ -n "${LG_RUNNER_LIMIT_MINUTES:-}" ]; then
  args+=(--resume --runner-limit "$LG_RUNNER_LIMIT_MINUTES")
  if [ -n "${LG_JOB_BUDGET:-}" ]; then args+=(--job-budget "$LG_JOB_BUDGET"); fi
elif [ -n "${LG_JOB_BUDGET:-}" ]; then
  echo "::error::job-budget: applies only with runner-limit-minutes (one job of a multi-job gate)" >&2
  exit 3
elif [ "${LG_RESUME:-false}" = true ]; then
  # A continued gate: the earlier gate's completed runs are in $LG_OUT/results; the same
  # sequential test goes on from them, up to the new max-repeats.
  args+=(--resume)
fi

if [ "$calibrate" = true ]; then
  # 0: the model is written; 2: pairs remain (the job budget, next: repeat) or no model was
  # measured, which fails the step. calibrate writes verdict.json like run.
  set +e
  loadgate "${args[@]}"
  code=$?
  set -e
  set_output exit-code "$code"
  set_output report-dir "$LG_OUT"
  if [ "$code" -ne 0 ] && [ "$code" -ne 2 ]; then exit "$code"; fi
else
  run_for_verdict "${args[@]}"
fi
# verdict.json's next (absent before multi-job gates): repeat while runs remain.
next=stop
if [ -f "$LG_OUT/verdict.json" ]; then
  next="$(node -e 'const v=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));process.stdout.write(v.next==="repeat"?"repeat":"stop")' "$LG_OUT/verdict.json")"
fi
set_output next "$next"
if [ "$calibrate" = true ] && [ "$code" -eq 2 ] && [ "$next" != repeat ]; then
  echo "::error::calibrate measured no noise model (too few completed runs); see $LG_OUT/README.md" >&2
  exit 2
fi
