#!/usr/bin/env bash
# Tears the bench down whatever happened before. env: LG_BENCH; aws: LG_TF_STATE_BUCKET, AWS_REGION.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

case "${LG_BENCH:-}" in
  local)
    # `loadgate run` stops every process it started (also on failure and Ctrl-C); what is
    # left is its working state.
    if [ -f "$LOADGATE_ROOT/scripts/teardown-local.sh" ]; then bash "$LOADGATE_ROOT/scripts/teardown-local.sh"; fi
    rm -rf "$LOADGATE_WORK"
    ;;
  aws)
    : "${LG_TF_STATE_BUCKET:?set tf-state-bucket: the S3 bucket holding the bench state}"
    : "${AWS_REGION:?configure AWS credentials first}"
    infra="$LOADGATE_ROOT/infra/aws"
    key="loadgate/${GITHUB_REPOSITORY}/${GITHUB_RUN_ID}/${GITHUB_RUN_ATTEMPT:-1}/terraform.tfstate"
    terraform -chdir="$infra" init -input=false \
      -backend-config="bucket=$LG_TF_STATE_BUCKET" -backend-config="region=$AWS_REGION" -backend-config="key=$key"
    # Destroy needs the same variables as apply; tfvars are rebuilt from the run identity.
    if [ ! -f "$LOADGATE_WORK/terraform.tfvars.json" ]; then
      loadgate plan --config "${LG_CONFIG:?config is needed to rebuild the bench variables}" --format tfvars --out "$LOADGATE_WORK/terraform.tfvars.json"
    fi
    terraform -chdir="$infra" destroy -input=false -auto-approve -var-file="$LOADGATE_WORK/terraform.tfvars.json"
    ;;
  *)
    echo "::error::bench: expected local or aws" >&2
    exit 3
    ;;
esac
