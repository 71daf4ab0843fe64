#!/usr/bin/env bash
# Tears the bench down whatever happened before. env: LG_BENCH; aws: LG_TF_STATE_BUCKET,
# AWS_REGION, LG_STATE_KEY (the key provision recorded; step output `state-key`), and
# optionally LG_TF_STATE_REGION (default AWS_REGION), LG_CONFIG and LG_VERSION (only to
# rebuild the variables when the tfvars object beside the state is missing).
#
# Re-runs: the key carries the run attempt of the provisioning job. When only this job is
# re-run, GITHUB_RUN_ATTEMPT has moved on but LG_STATE_KEY (from the gate job's outputs,
# which GitHub keeps for jobs that are not re-run) still names the bench to destroy. The
# attempt-based key is only the fallback when no key was recorded, i.e. provision never
# got as far as planning, so nothing was created under it.
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
    state_region="${LG_TF_STATE_REGION:-$AWS_REGION}"
    infra="$LOADGATE_ROOT/infra/aws"
    tfvars="$LOADGATE_WORK/teardown.tfvars.json"
    key="${LG_STATE_KEY:-}"
    if [ -z "$key" ]; then
      key="loadgate/${GITHUB_REPOSITORY:?}/${GITHUB_RUN_ID:?}/${GITHUB_RUN_ATTEMPT:-1}/terraform.tfstate"
      echo "::warning::no state-key was recorded by provision; trying this attempt's key $key"
    fi
    key_pattern='^loadgate/([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)/([A-Za-z0-9._-]+)/([0-9]+)/terraform\.tfstate$'
    if [[ ! "$key" =~ $key_pattern ]]; then
      echo "::error::state-key: not a loadgate state key (loadgate/<owner>/<repo>/<run id>/<attempt>/terraform.tfstate)" >&2
      exit 3
    fi
    repository="${BASH_REMATCH[1]}" run_id="${BASH_REMATCH[2]}" run_attempt="${BASH_REMATCH[3]}"
    bucket_url="s3://$LG_TF_STATE_BUCKET"

    # 0: the object exists, 1: it does not (404). Anything else (no permission, no
    # network) stops teardown loudly: "nothing to destroy" must never be a guess.
    s3_exists() {
      local err
      if err=$(aws s3api head-object --region "$state_region" --bucket "$LG_TF_STATE_BUCKET" --key "$1" 2>&1 > /dev/null); then return 0; fi
      if [[ "$err" == *"(404)"* || "$err" == *"Not Found"* ]]; then return 1; fi
      echo "::error::cannot tell whether s3://$LG_TF_STATE_BUCKET/$1 exists: ${err##*$'\n'}" >&2
      exit 1
    }
    if ! s3_exists "$key" && ! s3_exists "${key%terraform.tfstate}terraform.tfvars.json"; then
      echo "nothing to destroy: neither a state nor variables exist under $bucket_url/${key%terraform.tfstate}"
      exit 0
    fi
    # Destroy needs the variables apply used: provision stored them beside the state.
    if ! aws s3 cp --only-show-errors --region "$state_region" "$bucket_url/${key%terraform.tfstate}terraform.tfvars.json" "$tfvars"; then
      echo "::warning::the bench's tfvars are missing from $bucket_url; rebuilding them from ${LG_CONFIG:-the config} and the run identity in the state key"
      safe_path "${LG_CONFIG:?config is needed to rebuild the bench variables}" config
      : "${LG_VERSION:?version is needed to rebuild the bench variables (any version matching target.versionPattern)}"
      loadgate plan --config "$LG_CONFIG" --format tfvars --out "$tfvars" --version "$LG_VERSION" --destroy-only \
        --repository "$repository" --run-id "$run_id" --run-attempt "$run_attempt" --commit "${GITHUB_SHA:?}"
    fi
    terraform -chdir="$infra" init -input=false -reconfigure \
      -backend-config="bucket=$LG_TF_STATE_BUCKET" -backend-config="region=$state_region" -backend-config="key=$key"
    destroy_log="$LOADGATE_WORK/destroy.log"
    destroy() {
      local rc=0
      terraform -chdir="$infra" destroy -input=false -auto-approve -var-file="$tfvars" 2> "$destroy_log" || rc=$?
      cat "$destroy_log" >&2
      return "$rc"
    }
    if destroy; then exit 0; fi
    # A job killed in the middle of an apply (provision past its timeout) leaves the S3
    # lock file behind, and every later destroy fails on it. By the time teardown runs
    # every job of this run has ended, so a lock on this run's own state is stale; the
    # janitor may destroy it too, but only past the bench's expires_at. Terraform prints
    # the holder as its LockInfo (internal/states/statemgr/locker.go: ID, Path, ...).
    grep -q 'Error acquiring the state lock' "$destroy_log" || exit 1
    lock_id=$(grep -oE 'ID: +[0-9a-f-]{36}' "$destroy_log" | head -n 1 | awk '{print $2}')
    lock_path=$(grep -oE 'Path: +[^ ]+' "$destroy_log" | head -n 1 | awk '{print $2}')
    if [ -z "$lock_id" ] || { [ "$lock_path" != "$LG_TF_STATE_BUCKET/$key" ] && [ "$lock_path" != "$LG_TF_STATE_BUCKET/$key.tflock" ]; }; then
      echo "::error::the state is locked by something other than this bench's state (${lock_path:-no path}); not unlocking it" >&2
      exit 1
    fi
    expires_at=$(jq -r '.expires_at // empty' "$tfvars")
    if [ -n "$expires_at" ] && [ "$(date -u +%s)" -ge "$(date -u -d "$expires_at" +%s)" ]; then
      echo "::error::the state is locked ($lock_id) and the bench expired at $expires_at, so the janitor may be destroying it now; not unlocking. Re-run teardown once the lock is gone, or run terraform force-unlock $lock_id yourself" >&2
      exit 1
    fi
    echo "::warning::the state $lock_path is locked ($lock_id), left by a job killed during an apply; unlocking it and destroying again"
    terraform -chdir="$infra" force-unlock -force "$lock_id"
    destroy
    ;;
  *)
    echo "::error::bench: expected local or aws" >&2
    exit 3
    ;;
esac
