#!/usr/bin/env bash
# Brings the bench up and writes its description ($LOADGATE_WORK/bench.json, outputs
# `bench` and `bench-file`).
# env: LG_BENCH (local|aws), LG_CONFIG, LG_MODE (gate|calibrate); aws also LG_TF_STATE_BUCKET, AWS_REGION (from the
# credentials step), LG_VERSION (the Mattermost version installed first: the baseline),
# and optionally LG_TF_STATE_REGION (default AWS_REGION), LG_LICENSE_SECRET_ARN,
# LG_DB_SNAPSHOT, LG_DB_DUMP_URL, LG_DB_NAME, LG_MAX_COST, LG_MAX_REPEATS, LG_CONTROLLER_IP (default: this
# runner's public address from checkip.amazonaws.com), LG_ADMIT_RUNNER=false (admit no
# controller at apply: the run jobs admit themselves, admit.sh), LG_CANDIDATE (its tarball is waited
# for too, `loadgate wait-release`), LG_RELEASE_WAIT=off (skips that wait).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

case "${LG_BENCH:-}" in
  local)
    # The local bench is real processes on 127.0.0.1; setup-local.sh checks and installs them.
    if [ ! -f "$LOADGATE_ROOT/scripts/setup-local.sh" ]; then
      echo "::error::scripts/setup-local.sh is missing from the loadgate checkout" >&2
      exit 3
    fi
    bash "$LOADGATE_ROOT/scripts/setup-local.sh"
    bash "$(dirname "${BASH_SOURCE[0]}")/ptrace.sh"
    printf '{"kind":"local","host":"127.0.0.1"}\n' > "$LOADGATE_WORK/bench.json"
    ;;
  aws)
    safe_path "$LG_CONFIG" config
    : "${LG_TF_STATE_BUCKET:?set tf-state-bucket: the S3 bucket holding the bench state}"
    : "${AWS_REGION:?configure AWS credentials first (aws-actions/configure-aws-credentials sets AWS_REGION)}"
    : "${LG_VERSION:?set version: the Mattermost version the bench installs first (the baseline)}"
    state_region="${LG_TF_STATE_REGION:-$AWS_REGION}"
    infra="$LOADGATE_ROOT/infra/aws"
    tfvars="$LOADGATE_WORK/terraform.tfvars.json"

    # The controller drives the agents' API and queries Prometheus and Grafana. When it
    # runs in this job (one job provisions and runs), the bench admits this runner's
    # address, and only it (/32). With LG_ADMIT_RUNNER=false (the reusable workflow, whose
    # run jobs are other jobs on other runners) the bench admits no one at apply; each
    # run job admits itself for its lifetime (admit.sh, output controller-ingress).
    controller_cidr=()
    if [ -n "${LG_CONTROLLER_IP:-}" ] || [ "${LG_ADMIT_RUNNER:-true}" != false ]; then
      controller_ip="$(runner_address)" || exit 3
      controller_cidr=(--controller-cidr "$controller_ip/32")
    fi

    plan=(plan --config "$LG_CONFIG" --format tfvars --out "$tfvars" --version "$LG_VERSION" "${controller_cidr[@]}")
    if [ -n "${LG_LICENSE_SECRET_ARN:-}" ]; then plan+=(--license-secret-arn "$LG_LICENSE_SECRET_ARN"); fi
    if [ -n "${LG_DB_SNAPSHOT:-}" ]; then plan+=(--db-snapshot "$LG_DB_SNAPSHOT"); fi
    if [ -n "${LG_DB_DUMP_URL:-}" ]; then plan+=(--db-dump-url "$LG_DB_DUMP_URL"); fi
    if [ -n "${LG_DB_NAME:-}" ]; then plan+=(--db-name "$LG_DB_NAME"); fi
    if [ -n "${LG_MAX_COST:-}" ]; then plan+=(--max-cost "$LG_MAX_COST"); fi
    if [ -n "${LG_MAX_REPEATS:-}" ]; then plan+=(--max-repeats "$LG_MAX_REPEATS"); fi
    # A calibration replaces the config's noise model: its plan neither reads nor checks it.
    case "${LG_MODE:-gate}" in
      gate) ;;
      calibrate) plan+=(--calibrate) ;;
      *) echo "::error::mode: expected gate or calibrate" >&2; exit 3 ;;
    esac
    if [ -n "${LG_RUNNER_LIMIT_MINUTES:-}" ]; then plan+=(--runner-limit "$LG_RUNNER_LIMIT_MINUTES"); fi
    # Prints the plan (resources, duration, cost); exit 1 refuses a gate over max-cost.
    loadgate "${plan[@]}"
    # Exit 1 refuses a bench whose vCPUs exceed the account's quota in its region: EC2
    # would refuse the launches half-way through the apply.
    loadgate check-quota --config "$LG_CONFIG"
    # A release-candidate tag often comes before its tarball: wait (bounded, target.releaseWait) before spending anything.
    if [ "${LG_RELEASE_WAIT:-on}" != off ]; then loadgate wait-release --config "$LG_CONFIG" --version "$LG_VERSION" ${LG_CANDIDATE:+--version "$LG_CANDIDATE"}; fi

    # The state key comes from the tfvars (src/aws/run-info.ts), and is recorded before
    # anything exists: teardown destroys exactly this bench even if apply fails half-way,
    # and even when only the teardown job is re-run (a new GITHUB_RUN_ATTEMPT).
    key="$(node -e 'process.stdout.write(JSON.parse(require("fs").readFileSync(process.argv[1],"utf8")).state_key)' "$tfvars")"
    set_output state-key "$key"
    printf '%s\n' "$key" > "$LOADGATE_WORK/state-key"

    # The variables go beside the state, so teardown (another job, another runner) and
    # the janitor destroy with exactly what was applied.
    aws s3 cp --only-show-errors --region "$state_region" "$tfvars" "s3://$LG_TF_STATE_BUCKET/${key%terraform.tfstate}terraform.tfvars.json"
    terraform -chdir="$infra" init -input=false \
      -backend-config="bucket=$LG_TF_STATE_BUCKET" -backend-config="region=$state_region" -backend-config="key=$key"
    terraform -chdir="$infra" apply -input=false -auto-approve -var-file="$tfvars"
    terraform -chdir="$infra" output -json > "$LOADGATE_WORK/terraform-outputs.json"
    loadgate tf-outputs "$LOADGATE_WORK/terraform-outputs.json" > "$LOADGATE_WORK/bench.json"
    # The controller's security groups and ports, for jobs that admit their own runner.
    node -e '
      const rules = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).controller_ingress?.value;
      if (!Array.isArray(rules) || !rules.length) { console.error("::error::terraform outputs: controller_ingress is missing (infra/aws from another version?)"); process.exit(3); }
      process.stdout.write(JSON.stringify(rules));
    ' "$LOADGATE_WORK/terraform-outputs.json" > "$LOADGATE_WORK/controller-ingress.json"
    set_output_json controller-ingress "$LOADGATE_WORK/controller-ingress.json"
    ;;
  *)
    echo "::error::bench: expected local or aws" >&2
    exit 3
    ;;
esac
set_output_json bench "$LOADGATE_WORK/bench.json"
set_output bench-file "$LOADGATE_WORK/bench.json"
