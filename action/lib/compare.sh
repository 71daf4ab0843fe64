#!/usr/bin/env bash
# Compares run results already on disk and writes the report directory.
# env: LG_BASELINE_RESULTS, LG_CANDIDATE_RESULTS (directories of run JSON), LG_CONFIG, LG_OUT, LG_NOTE.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
safe_path "$LG_BASELINE_RESULTS" baseline-results
safe_path "$LG_CANDIDATE_RESULTS" candidate-results
safe_path "$LG_OUT" out

args=(compare --out "$LG_OUT")
shopt -s nullglob
for f in "$LG_BASELINE_RESULTS"/*.json; do args+=(--baseline "$f"); done
for f in "$LG_CANDIDATE_RESULTS"/*.json; do args+=(--candidate "$f"); done
if [ -n "${LG_CONFIG:-}" ]; then safe_path "$LG_CONFIG" config; args+=(--config "$LG_CONFIG"); fi
if [ -n "${LG_NOTE:-}" ]; then args+=(--note "$LG_NOTE"); fi

run_for_verdict "${args[@]}"
if [ -f "$LG_OUT/verdict.json" ]; then set_output_json verdict-json "$LG_OUT/verdict.json"; fi
