#!/usr/bin/env bash
# Checks the AWS bench (infra/) with Terraform itself, on this machine only
# (no AWS account, nothing leaves 127.0.0.1 but the module downloads):
#   1. terraform fmt -check -recursive infra;
#   2. checkov on infra/, zero failed checks (exceptions are inline
#      `#checkov:skip=CKV_...:reason` next to the resource they concern);
#   3. terraform validate on infra/aws and every example;
#   4. terraform test (infra/aws/tests/*.tftest.hcl, mocked provider);
#   5. the emulator: apply and destroy against moto on 127.0.0.1, the janitor
#      against it, every API call logged and simulated against the IAM policy
#      (test/aws/emulator.test.ts, test/aws/terraform-graph.test.ts).
# Terraform and the AWS provider are built from the Go module proxy by
# scripts/infra-tools.sh and cached; checkov and moto go into venvs under the
# cache. Prints each step's time.
#
# Environment: LOADGATE_CACHE_DIR (default .cache) holds the venvs;
# LOADGATE_INFRA_CACHE (default .cache/terraform) the Terraform builds.
set -euo pipefail

cd "$(dirname "$0")/.."
CHECKOV_VERSION=3.3.30
# moto 5.1.12 is the emulator the skips in test/aws/emulator/skips.ts were checked
# against; awscli is what the janitor calls (`aws`).
MOTO_VERSION=5.1.12
AWSCLI_VERSION=1.42.30
CACHE_DIR=${LOADGATE_CACHE_DIR:-.cache}
VENV="$CACHE_DIR/checkov-venv"
MOTO_VENV="${LOADGATE_INFRA_CACHE:-$PWD/.cache/terraform}/moto-venv"

seconds() { date +%s; }
started=$(seconds)
step_started=$started
finish_step() {
  local now
  now=$(seconds)
  echo "check-infra: $1 ($((now - step_started)) s)"
  step_started=$now
}

# --- Terraform and the provider ------------------------------------------------
tools="$(bash scripts/infra-tools.sh)"
eval "$tools"
export TF_CLI_CONFIG_FILE CHECKPOINT_DISABLE=1 TF_IN_AUTOMATION=1
finish_step "$("$TERRAFORM" version | head -n 1), hashicorp/aws $AWS_PROVIDER_VERSION from the local mirror"

if ! "$TERRAFORM" fmt -check -recursive -diff infra; then
  echo "check-infra: terraform fmt found unformatted files (above); run: $TERRAFORM fmt -recursive infra" >&2
  exit 1
fi
finish_step "terraform fmt -check: all files formatted"

# --- checkov -----------------------------------------------------------------
if ! "$VENV/bin/checkov" --version 2> /dev/null | grep -qx "$CHECKOV_VERSION"; then
  echo "check-infra: installing checkov $CHECKOV_VERSION into $VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "checkov==$CHECKOV_VERSION"
  finish_step "checkov $CHECKOV_VERSION installed"
fi

# --skip-download: no calls to Prisma Cloud for guidelines or policies.
if ! "$VENV/bin/checkov" -d infra --framework terraform --quiet --compact --skip-download; then
  echo "check-infra: checkov found failed checks (above); fix them, or skip one inline with a reason" >&2
  exit 1
fi
finish_step "checkov: no failed checks"

# --- validate and test, in a copy (init writes .terraform and a lock file) -----
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp -r infra "$work/infra"
find "$work/infra" \( -name .terraform -o -name .terraform.lock.hcl -o -name '*.tfstate*' \) -prune -exec rm -rf {} +
for dir in "$work/infra/aws" "$work"/infra/aws/examples/*/; do
  name="${dir#"$work/"}"
  "$TERRAFORM" -chdir="$dir" init -input=false -backend=false > "$work/init.log" 2>&1 || { cat "$work/init.log" >&2; echo "check-infra: terraform init failed in $name" >&2; exit 1; }
  "$TERRAFORM" -chdir="$dir" validate -no-color || { echo "check-infra: terraform validate failed in $name" >&2; exit 1; }
done
finish_step "terraform validate: infra/aws and every example"

"$TERRAFORM" -chdir="$work/infra/aws" test -no-color || { echo "check-infra: terraform test failed (above)" >&2; exit 1; }
finish_step "terraform test: infra/aws/tests"

# --- the emulator ------------------------------------------------------------
if ! "$MOTO_VENV/bin/python" -c "import moto, sys; sys.exit(moto.__version__ != '$MOTO_VERSION')" 2> /dev/null \
  || ! "$MOTO_VENV/bin/aws" --version 2>&1 | grep -q "^aws-cli/$AWSCLI_VERSION "; then
  echo "check-infra: installing moto[server] $MOTO_VERSION and awscli $AWSCLI_VERSION into $MOTO_VENV"
  python3 -m venv "$MOTO_VENV"
  "$MOTO_VENV/bin/pip" install --quiet --disable-pip-version-check "moto[server]==$MOTO_VERSION" "awscli==$AWSCLI_VERSION"
  finish_step "moto $MOTO_VERSION installed"
fi

CALL_LOG="${LOADGATE_INFRA_CALL_LOG:-$work/aws-calls.jsonl}"
LOADGATE_INFRA_EMULATOR=1 TERRAFORM="$TERRAFORM" MOTO_VENV="$MOTO_VENV" LOADGATE_INFRA_CALL_LOG="$CALL_LOG" \
  nice -n 5 node --import tsx --test --test-concurrency=1 test/aws/terraform-graph.test.ts test/aws/emulator.test.ts \
  || { echo "check-infra: the emulator tests failed (above)" >&2; exit 1; }
echo "check-infra: $(wc -l < "$CALL_LOG") API calls logged with their tags in $CALL_LOG"
finish_step "emulator: apply, janitor, IAM simulation"

echo "check-infra: passed in $(($(seconds) - started)) s"
