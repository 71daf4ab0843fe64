#!/usr/bin/env bash
# Checks that every secret and variable the gate config needs on its bench is set, before
# anything is provisioned (loadgate preflight), and writes the step output problem when not.
# env: LG_CONFIG; HAVE_* ("true" when set) for the secrets aws-role-arn, license-secret-arn,
# grafana-token, admin-email, admin-password and the variables LOADGATE_AWS_ROLE_ARN,
# LOADGATE_LICENSE_SECRET_ARN, LOADGATE_TF_STATE_BUCKET; LG_USERS_FILE, LG_GRAFANA_URL.
# shellcheck source=action/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
safe_path "$LG_CONFIG" config

secrets=()
for pair in aws-role-arn:HAVE_AWS_ROLE_ARN license-secret-arn:HAVE_LICENSE_SECRET_ARN grafana-token:HAVE_GRAFANA_TOKEN admin-email:HAVE_ADMIN_EMAIL admin-password:HAVE_ADMIN_PASSWORD; do
  var="${pair#*:}"
  if [ "${!var:-}" = true ]; then secrets+=("${pair%%:*}"); fi
done
variables=()
for pair in LOADGATE_AWS_ROLE_ARN:HAVE_VAR_AWS_ROLE_ARN LOADGATE_LICENSE_SECRET_ARN:HAVE_VAR_LICENSE_SECRET_ARN LOADGATE_TF_STATE_BUCKET:HAVE_VAR_TF_STATE_BUCKET; do
  var="${pair#*:}"
  if [ "${!var:-}" = true ]; then variables+=("${pair%%:*}"); fi
done
if [ -n "${LG_USERS_FILE:-}" ]; then variables+=(LOADGATE_USERS_FILE); fi
if [ -n "${LG_GRAFANA_URL:-}" ]; then variables+=(LOADGATE_GRAFANA_URL); fi

args=(preflight --config "$LG_CONFIG" --bench aws --github-output
  --secrets "$(IFS=,; printf '%s' "${secrets[*]:-}")" --variables "$(IFS=,; printf '%s' "${variables[*]:-}")")
if [ -n "${LG_USERS_FILE:-}" ]; then args+=(--users-file "$LG_USERS_FILE"); fi
if [ -n "${LG_GRAFANA_URL:-}" ]; then args+=(--grafana-url "$LG_GRAFANA_URL"); fi
loadgate "${args[@]}"
