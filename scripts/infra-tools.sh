#!/usr/bin/env bash
# Builds, from the Go module proxy only, the two tools that check infra/aws:
#   * Terraform $TERRAFORM_VERSION (the module needs >= 1.11: use_lockfile);
#   * the hashicorp/aws provider from a pinned pseudo-version of its main branch,
#     registering only the service packages infra/aws uses (a full build takes
#     well over 10 minutes on 2 cores), installed into a filesystem mirror.
# Both are cached under $INFRA_CACHE, keyed by version (and, for the provider,
# by the trimmed service list), so a second run costs nothing.
#
# Prints, on stdout, shell assignments for the caller to eval:
#   TERRAFORM=<binary> TF_CLI_CONFIG_FILE=<config pointing at the mirror>
#   AWS_PROVIDER_VERSION=<version the mirror serves>
# Progress goes to stderr.
#
# Usage: eval "$(bash scripts/infra-tools.sh)"
set -euo pipefail
cd "$(dirname "$0")/.."

# Terraform: the release the repo's Terraform rows in scripts/go-tools.txt pin.
TERRAFORM_VERSION="$(sed -n 's/^terraform github.com\/hashicorp\/terraform@//p' scripts/go-tools.txt)"
# Provider: main just after 6.47.0 (its CHANGELOG heads "6.48.0 (Unreleased)").
# The mirror serves it as 6.48.0, the release it precedes: Terraform leaves
# pre-release versions out of ranges such as versions.tf's ">= 5.80, < 7.0".
AWS_PROVIDER_MODULE="$(sed -n 's/^terraform-provider-aws //p' scripts/go-tools.txt)"
AWS_PROVIDER_VERSION=6.48.0
# Service packages infra/aws needs (resource/data-source prefixes → package in
# internal/service/): ec2 (VPC, subnets, SGs, instances, AMI, AZs), iam, kms,
# logs, opensearch, rds, scheduler (the bench's expiry schedules), secretsmanager,
# sts (aws_caller_identity) and meta
# (aws_partition, aws_region). The provider core registers nothing else itself;
# the SDK clients these packages call are kept by the second trimming below.
AWS_SERVICES=(ec2 iam kms logs meta opensearch rds scheduler secretsmanager sts)

INFRA_CACHE=${LOADGATE_INFRA_CACHE:-$PWD/.cache/terraform}
log() { printf '[infra-tools] %s\n' "$*" >&2; }
command -v go > /dev/null || { log "go is required (Terraform and the AWS provider are built from source)"; exit 2; }
[ -n "$TERRAFORM_VERSION" ] || { log "scripts/go-tools.txt has no 'terraform github.com/hashicorp/terraform@<version>' line"; exit 2; }
[ -n "$AWS_PROVIDER_MODULE" ] || { log "scripts/go-tools.txt has no 'terraform-provider-aws <module>@<version>' line"; exit 2; }

# Unpack a module from the proxy into a writable temp dir (the module cache is read-only).
module_source() { # module@version dest
  local dir
  dir="$(cd /tmp && GOFLAGS=-mod=mod go mod download -json "$1" | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p')"
  [ -d "$dir" ] || { log "go mod download $1 gave no source directory"; exit 1; }
  cp -r "$dir/." "$2"
  chmod -R u+w "$2"
}

# --- AWS provider -------------------------------------------------------------
# The cache key: the service list and this script's trimming (a change to either rebuilds).
services_key="$( (printf '%s\n' "${AWS_SERVICES[@]}"; sed -n '/^# --- AWS provider/,/^# --- Terraform/p' "$0") | sha256sum | cut -c1-12)"
MIRROR="$INFRA_CACHE/mirror-$services_key"
PROVIDER_DIR="$MIRROR/registry.terraform.io/hashicorp/aws/$AWS_PROVIDER_VERSION/linux_amd64"
PROVIDER_BIN="$PROVIDER_DIR/terraform-provider-aws_v$AWS_PROVIDER_VERSION"
BUILT_FROM="$PROVIDER_DIR/built-from"
if [ ! -x "$PROVIDER_BIN" ] || [ "$(cat "$BUILT_FROM" 2> /dev/null)" != "$AWS_PROVIDER_MODULE" ]; then
  log "building $AWS_PROVIDER_MODULE with ${AWS_SERVICES[*]} (several minutes, ~4 GB RAM, on the first run)"
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  module_source "$AWS_PROVIDER_MODULE" "$work/src"
  gen="$work/src/internal/provider/sdkv2/service_packages_gen.go"
  # 1. The provider registers only our service packages: of the generated list,
  #    the import line and the `<pkg>.ServicePackage(ctx),` line of every other go.
  keep="$(printf '%s|' "${AWS_SERVICES[@]}")"
  keep="${keep%|}"
  awk -v keep="^($keep)$" '
    match($0, /internal\/service\/[a-z0-9]+"$/) {
      pkg = substr($0, RSTART + 17, RLENGTH - 18); if (pkg !~ keep) next
    }
    match($0, /^\t\t[a-z0-9]+\.ServicePackage\(ctx\),$/) {
      pkg = $1; sub(/\..*/, "", pkg); if (pkg !~ keep) next
    }
    { print }' "$gen" > "$gen.trimmed"
  mv "$gen.trimmed" "$gen"
  registered="$(grep -c '\.ServicePackage(ctx),$' "$gen")"
  [ "$registered" -eq "${#AWS_SERVICES[@]}" ] || { log "trimming $gen kept $registered service packages, expected ${#AWS_SERVICES[@]}"; exit 1; }
  # 2. internal/conns/awsclient_gen.go still imports every AWS SDK client (one
  #    getter each, ~260), which is most of the build. Keep the getters that the
  #    packages now in the build call, found from `go list -deps`, and their imports.
  clients="$work/src/internal/conns/awsclient_gen.go"
  (cd "$work/src" && GOFLAGS=-mod=mod go list -deps -f '{{if .Module}}{{if eq .Module.Path "github.com/hashicorp/terraform-provider-aws"}}{{range .GoFiles}}{{$.Dir}}/{{.}}{{"\n"}}{{end}}{{end}}{{end}}' .) \
    | grep -v '/internal/conns/awsclient_gen.go$' > "$work/files"
  used="$(xargs cat < "$work/files" | grep -o '\.[A-Za-z0-9]*Client(ctx' | sort -u | sed 's/^\.//; s/(ctx$//' | paste -sd'|')"
  awk -v used="^($used)$" '
    /^func \(c \*AWSClient\) [A-Za-z0-9]+Client\(ctx context.Context\)/ {
      name = $4; sub(/\(.*/, "", name)
      if (name !~ used) { skip = 1; next }
    }
    skip { if ($0 == "}") { skip = 0; dropblank = 1 }; next }
    dropblank && $0 == "" { dropblank = 0; next }
    { dropblank = 0; print }' "$clients" > "$clients.trimmed"
  # Drop the SDK imports no remaining getter uses (Go refuses unused imports).
  body="$(sed -n '/^)$/,$p' "$clients.trimmed")"
  while IFS= read -r line; do
    if [[ $line =~ ^[[:space:]]*([a-z0-9_]+[[:space:]]+)?\"github.com/aws/aws-sdk-go-v2/service/([a-z0-9]+)\"$ ]]; then
      ident="${BASH_REMATCH[1]:-${BASH_REMATCH[2]}}"
      ident="${ident%% *}"
      grep -q "[^a-z0-9]$ident\." <<< "$body" || continue
    fi
    printf '%s\n' "$line"
  done < "$clients.trimmed" > "$clients"
  rm "$clients.trimmed"
  log "kept $(grep -c '^func (c \*AWSClient)' "$clients") AWS SDK clients: $(grep -o '^func (c \*AWSClient) [A-Za-z0-9]*Client' "$clients" | sed 's/.* //' | paste -sd' ')"
  mkdir -p "$PROVIDER_DIR"
  (cd "$work/src" && CGO_ENABLED=0 GOFLAGS=-mod=mod nice -n 10 go build -trimpath -o "$PROVIDER_BIN.tmp" .)
  mv "$PROVIDER_BIN.tmp" "$PROVIDER_BIN"
  echo "$AWS_PROVIDER_MODULE" > "$BUILT_FROM"
  rm -rf "$work"
  trap - EXIT
fi

# --- Terraform ----------------------------------------------------------------
# `go install github.com/hashicorp/terraform@v1.11.x` is refused: its go.mod
# replaces nine nested modules (backends, internal/legacy) by ./ paths, and a
# module zip leaves nested modules out. The proxy serves each nested module at
# the release's commit too, so the build swaps every ./ replace for that.
TERRAFORM="$INFRA_CACHE/bin/terraform-$TERRAFORM_VERSION"
if ! "$TERRAFORM" version 2> /dev/null | head -n 1 | grep -qx "Terraform $TERRAFORM_VERSION"; then
  log "building Terraform $TERRAFORM_VERSION from the Go module proxy (minutes on the first run)"
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  module_source "github.com/hashicorp/terraform@$TERRAFORM_VERSION" "$work/src"
  (
    cd "$work/src"
    # Go 1.24 removed the tlskyber setting (post-quantum key exchange is
    # X25519MLKEM768 now), and a go.mod naming an unknown setting does not load.
    go mod edit -dropgodebug=tlskyber
    # The nested modules have no tags, only pseudo-versions: the release's is the
    # one stamped with the release commit's time (`go list` shows no pseudo-versions,
    # so the proxy's version list is read directly).
    stamp="$(GOFLAGS=-mod=mod go list -m -json "github.com/hashicorp/terraform@$TERRAFORM_VERSION" | sed -n 's/^\s*"Time": "\(.*\)",*$/\1/p' | tr -d ':TZ-')"
    proxy="$(go env GOPROXY | cut -d, -f1)"
    sed -n 's/^replace \(github.com\/hashicorp\/terraform\/[^ ]*\) => \.\/.*$/\1/p' go.mod > ../nested
    while read -r nested; do
      pseudo="$(curl -fsS --max-time 60 "$proxy/$nested/@v/list" | grep -m1 "^v0\.0\.0-$stamp-" || true)"
      [ -n "$pseudo" ] || { log "the Go module proxy ($proxy) lists no $nested at the release's time ($stamp)"; exit 1; }
      go mod edit -dropreplace="$nested" -require="$nested@$pseudo"
    done < ../nested
    mkdir -p "$INFRA_CACHE/bin"
    # version.dev=no as HashiCorp's release builds set it, else it reports v1.11.4-dev.
    CGO_ENABLED=0 GOFLAGS=-mod=mod nice -n 10 go build -trimpath -ldflags "-X github.com/hashicorp/terraform/version.dev=no" -o "$TERRAFORM.tmp" .
    mv "$TERRAFORM.tmp" "$TERRAFORM"
  )
  rm -rf "$work"
  trap - EXIT
fi

# A CLI config that installs hashicorp/aws only from the mirror and nothing from
# the network: init fails loudly instead of reaching the registry.
CLI_CONFIG="$INFRA_CACHE/terraformrc-$services_key"
cat > "$CLI_CONFIG" << EOF
provider_installation {
  filesystem_mirror {
    path    = "$MIRROR"
    include = ["registry.terraform.io/hashicorp/aws"]
  }
}
EOF

printf 'TERRAFORM=%q\nTF_CLI_CONFIG_FILE=%q\nAWS_PROVIDER_VERSION=%q\n' "$TERRAFORM" "$CLI_CONFIG" "$AWS_PROVIDER_VERSION"
