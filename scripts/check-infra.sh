#!/usr/bin/env bash
# Static checks of the AWS bench (infra/) that need neither AWS nor provider
# downloads, so they run anywhere, CI included:
#   1. terraform fmt -check -recursive infra, with Terraform v1.5.7 built by
#      `go install` (newer releases no longer build that way; fmt's rules are
#      the same, and fmt needs no providers);
#   2. checkov on infra/, zero failed checks: every exception is an inline
#      `#checkov:skip=CKV_...:reason` next to the resource it concerns.
# Tools are installed on first use (Terraform into `go env GOPATH`/bin, checkov
# into a venv under .cache/) and reused afterwards. Prints each step's time.
#
# Environment: LOADGATE_CACHE_DIR (default .cache) holds the checkov venv.
set -euo pipefail

cd "$(dirname "$0")/.."
TERRAFORM_VERSION=v1.5.7
CHECKOV_VERSION=3.3.30
CACHE_DIR=${LOADGATE_CACHE_DIR:-.cache}
VENV="$CACHE_DIR/checkov-venv"

seconds() { date +%s; }
started=$(seconds)
step_started=$started
finish_step() {
  local now
  now=$(seconds)
  echo "check-infra: $1 ($((now - step_started)) s)"
  step_started=$now
}

# --- Terraform ---------------------------------------------------------------
command -v go > /dev/null || { echo "check-infra: go is required to build Terraform $TERRAFORM_VERSION" >&2; exit 2; }
TERRAFORM="$(go env GOPATH)/bin/terraform"
# No CLI config file, no update check: fmt needs neither, and nothing leaves the machine.
export TF_CLI_CONFIG_FILE=/dev/null CHECKPOINT_DISABLE=1
if ! "$TERRAFORM" version 2> /dev/null | head -n 1 | grep -qx "Terraform $TERRAFORM_VERSION"; then
  echo "check-infra: building Terraform $TERRAFORM_VERSION with go install (minutes on the first run)"
  go install "github.com/hashicorp/terraform@$TERRAFORM_VERSION"
  finish_step "Terraform $TERRAFORM_VERSION installed"
fi

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

echo "check-infra: passed in $(($(seconds) - started)) s"
