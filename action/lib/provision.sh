#!/usr/bin/env bash
# Brings the bench up and writes its description ($LOADGATE_WORK/bench.json, output `bench`).
# env: LG_BENCH (local|aws), LG_CONFIG; aws also LG_TF_STATE_BUCKET, AWS_REGION.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

case "${LG_BENCH:-}" in
  local)
    # The local bench is real processes on 127.0.0.1; setup-local.sh checks and installs them.
    if [ ! -f "$LOADGATE_ROOT/scripts/setup-local.sh" ]; then
      echo "::error::scripts/setup-local.sh is missing from the loadgate checkout" >&2
      exit 3
    fi
    bash "$LOADGATE_ROOT/scripts/setup-local.sh"
    printf '{"kind":"local","host":"127.0.0.1"}\n' > "$LOADGATE_WORK/bench.json"
    ;;
  aws)
    safe_path "$LG_CONFIG" config
    : "${LG_TF_STATE_BUCKET:?set tf-state-bucket: the S3 bucket holding the bench state}"
    : "${AWS_REGION:?configure AWS credentials first (aws-actions/configure-aws-credentials sets AWS_REGION)}"
    infra="$LOADGATE_ROOT/infra/aws"
    # One state per run attempt (src/aws/run-info.ts), so teardown finds exactly this bench.
    key="loadgate/${GITHUB_REPOSITORY}/${GITHUB_RUN_ID}/${GITHUB_RUN_ATTEMPT:-1}/terraform.tfstate"
    loadgate plan --config "$LG_CONFIG" --format tfvars --out "$LOADGATE_WORK/terraform.tfvars.json"
    terraform -chdir="$infra" init -input=false \
      -backend-config="bucket=$LG_TF_STATE_BUCKET" -backend-config="region=$AWS_REGION" -backend-config="key=$key"
    terraform -chdir="$infra" apply -input=false -auto-approve -var-file="$LOADGATE_WORK/terraform.tfvars.json"
    terraform -chdir="$infra" output -json > "$LOADGATE_WORK/terraform-outputs.json"
    loadgate tf-outputs "$LOADGATE_WORK/terraform-outputs.json" > "$LOADGATE_WORK/bench.json"
    ;;
  *)
    echo "::error::bench: expected local or aws" >&2
    exit 3
    ;;
esac
set_output_json bench "$LOADGATE_WORK/bench.json"
set_output bench-file "$LOADGATE_WORK/bench.json"
