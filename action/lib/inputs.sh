#!/usr/bin/env bash
# Validates the gate inputs (check-inputs) and, when no baseline is given, picks the newest
# stable tag below the candidate (pick-baseline), writing both as step outputs.
# env: INPUT_MODE, INPUT_CANDIDATE, INPUT_BASELINE, INPUT_TESTS, INPUT_REPEATS, INPUT_BENCH, INPUT_CONFIG,
# INPUT_MAX_COST, INPUT_CHECK_NAME, INPUT_RC_PATTERN, INPUT_RUNNER_LIMIT_MINUTES, INPUT_RUN_JOB_BUDGET, INPUT_MAX_REPEATS, INPUT_CONTINUE_FROM, GITHUB_EVENT_NAME, GITHUB_REF (read through @actions/github's context);
# GITHUB_TOKEN for the tag list.
# shellcheck source=action/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# check-inputs also checks the AWS run jobs' budget (run-job-budget against
# runner-limit-minutes), so a bad one stops the gate here, before anything is provisioned.
loadgate check-inputs --json --github-output > "$LOADGATE_WORK/inputs.json"
cat "$LOADGATE_WORK/inputs.json"
candidate="$(node -e 'process.stdout.write(JSON.parse(require("fs").readFileSync(process.argv[1],"utf8")).candidate)' "$LOADGATE_WORK/inputs.json")"
needs="$(node -e 'process.stdout.write(String(JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"))["needs-baseline"]))' "$LOADGATE_WORK/inputs.json")"
config="$(node -e 'process.stdout.write(JSON.parse(require("fs").readFileSync(process.argv[1],"utf8")).config)' "$LOADGATE_WORK/inputs.json")"
if [ "$needs" = true ]; then
  pick=(pick-baseline --candidate "$candidate" --write-choice "$LOADGATE_WORK/baseline-choice.json" --github-output)
  if [ -f "$config" ]; then pick+=(--config "$config"); fi
  loadgate "${pick[@]}"
  set_output baseline-choice "$LOADGATE_WORK/baseline-choice.json"
fi
