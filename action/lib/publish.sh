#!/usr/bin/env bash
# Check run and report pull request. env: LG_MODE (start|finish|abort|scan), LG_BASELINE,
# LG_CANDIDATE, LG_SHA, LG_CONFIG, LG_TESTS, LG_REPEATS, LG_BENCH, LG_MAX_COST, LG_MAX_REPEATS, LG_CONTINUE_FROM, LG_REPORT,
# LG_EARLIER_PAIRS, LG_CHECK_RUN_ID, LG_CHECK_NAME, LG_BASELINE_CHOICE, LG_GATE_RESULT, LG_REPORT_WITHHELD,
# LG_FAIL_ON_VERDICT, LG_PROBLEM, LG_REPORTS_REPOSITORY, LG_RUNNER_LIMIT_MINUTES, LG_TOKEN_PROBLEM,
# LG_REPORTS_TOKEN_PROBLEM; GITHUB_TOKEN, LOADGATE_REPORTS_TOKEN.
# shellcheck source=action/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# scan: the report must not leave this job if it holds a secret of this job's environment.
if [ "${LG_MODE:-}" = scan ]; then
  report="${LG_REPORT:?report: the report directory to scan}"
  if [ ! -d "$report" ]; then
    echo "no report directory $report: nothing to scan or upload"
    exit 0
  fi
  loadgate scan-report --report "$report"
  exit 0
fi

args=(publish --mode "$LG_MODE" --candidate "$LG_CANDIDATE" --github-output)
if [ -n "${LG_BASELINE:-}" ]; then args+=(--baseline "$LG_BASELINE"); fi
if [ -n "${LG_SHA:-}" ]; then args+=(--sha "$LG_SHA"); fi
if [ -n "${LG_CONFIG:-}" ]; then args+=(--config "$LG_CONFIG"); fi
if [ -n "${LG_CHECK_NAME:-}" ]; then args+=(--check-name "$LG_CHECK_NAME"); fi
if [ -n "${LG_BASELINE_CHOICE:-}" ] && [ -f "$LG_BASELINE_CHOICE" ]; then args+=(--baseline-choice "$LG_BASELINE_CHOICE"); fi
# Why the gate could not start (the preflight's problem output), said in the check run.
if [ -n "${LG_PROBLEM:-}" ] && [ "$LG_MODE" != start ]; then args+=(--problem "$LG_PROBLEM"); fi
if [ "$LG_MODE" = abort ]; then
  : # the check run of a gate that could not start: what is wrong with the config, or that prepare failed
elif [ "$LG_MODE" = start ]; then
  if [ -n "${LG_TESTS:-}" ]; then args+=(--tests "$LG_TESTS"); fi
  if [ -n "${LG_REPEATS:-}" ]; then args+=(--repeats "$LG_REPEATS"); fi
  if [ -n "${LG_BENCH:-}" ]; then args+=(--bench "$LG_BENCH"); fi
  if [ -n "${LG_MAX_COST:-}" ]; then args+=(--max-cost "$LG_MAX_COST"); fi
  if [ -n "${LG_MAX_REPEATS:-}" ]; then args+=(--max-repeats "$LG_MAX_REPEATS"); fi
  if [ -n "${LG_CONTINUE_FROM:-}" ]; then args+=(--continue-from "$LG_CONTINUE_FROM" --earlier-pairs "${LG_EARLIER_PAIRS:-}"); fi
else
  args+=(--report "${LG_REPORT:?report: the report directory is required to finish}")
  if [ -n "${LG_CHECK_RUN_ID:-}" ]; then args+=(--check-run-id "$LG_CHECK_RUN_ID"); fi
  if [ -n "${LG_GATE_RESULT:-}" ]; then args+=(--gate-result "$LG_GATE_RESULT"); fi
  if [ "${LG_REPORT_WITHHELD:-false}" = true ]; then args+=(--report-withheld); fi
  if [ "${LG_FAIL_ON_VERDICT:-true}" = true ]; then args+=(--fail-on-verdict); fi
  if [ -n "${LG_REPORTS_REPOSITORY:-}" ]; then args+=(--reports-repository "$LG_REPORTS_REPOSITORY"); fi
  if [ -n "${LG_RUNNER_LIMIT_MINUTES:-}" ]; then args+=(--runner-limit-minutes "$LG_RUNNER_LIMIT_MINUTES"); fi
  if [ -n "${LG_TOKEN_PROBLEM:-}" ]; then args+=(--token-problem "$LG_TOKEN_PROBLEM"); fi
  if [ -n "${LG_REPORTS_TOKEN_PROBLEM:-}" ]; then args+=(--reports-token-problem "$LG_REPORTS_TOKEN_PROBLEM"); fi
fi
loadgate "${args[@]}"
