#!/usr/bin/env bash
# Installs what the local gate runs on a fresh Debian machine (scripts/gate-local.sh); with
# --tests, also what only the tests use (scripts/test.sh). Idempotent: each step is skipped
# when its result is already there. Run as root (CI) or with sudo available.
# Usage: bash scripts/setup.sh [--tests]
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '[setup] %s\n' "$*"; }

TESTS=false
case "${1:-}" in
  '') ;;
  --tests) TESTS=true ;;
  *) log "unknown argument: $1 (usage: bash scripts/setup.sh [--tests])"; exit 2 ;;
esac

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

# Debian packages: fonts for the graphs and python3-venv for the Synapse virtualenvs (the
# local bench's other components come from setup-local.sh); for the tests, `time` for the
# benchmark and shellcheck.
APT_PACKAGES=(fonts-dejavu-core python3-venv)
if $TESTS; then APT_PACKAGES+=(time shellcheck); fi
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  log "apt-get install ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ -f scripts/setup-local.sh ]; then
  bash scripts/setup-local.sh
fi

# Every npm package is a devDependency (the published package is the self-contained
# bundle), so the gate from the sources needs the full install too.
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  log "npm ci"
  npm ci --no-audit --no-fund --loglevel=error
elif [ ! -d node_modules/typescript ]; then
  log "npm ci (an install without the devDependencies)"
  npm ci --no-audit --no-fund --loglevel=error
fi

# k6: the gate's own set-up builds it (ensureK6, <cache>/k6/<version>/k6) beside the
# Synapse installs, so a gate never waits for it first; the tests, some of which run k6
# without a gate, have it built here.
export LOADGATE_CACHE_DIR="${LOADGATE_CACHE_DIR:-$PWD/.cache/loadgate}"
K6_VERSION="$(sed -n 's/^k6 go.k6.io\/k6@//p' scripts/go-tools.txt)"
if $TESTS && [ ! -x "$LOADGATE_CACHE_DIR/k6/$K6_VERSION/k6" ]; then
  log "go install go.k6.io/k6@$K6_VERSION"
  mkdir -p "$LOADGATE_CACHE_DIR/k6/$K6_VERSION"
  (cd /tmp && GOBIN="$LOADGATE_CACHE_DIR/k6/$K6_VERSION" CGO_ENABLED=0 GOFLAGS=-mod=mod go install "go.k6.io/k6@$K6_VERSION")
fi


# The other Go-built tools (act, actionlint) only the tests use, pinned; cached in GOBIN so
# a second run costs nothing.
if $TESTS; then
  export GOBIN="${GOBIN:-$PWD/.cache/bin}"
  mkdir -p "$GOBIN"
  go_tool() { # name module@version
    if [ ! -x "$GOBIN/$1" ]; then
      log "go install $2"
      (cd /tmp && GOFLAGS=-mod=mod go install "$2")
    fi
  }
  while read -r name module; do
    case "$name" in ''|'#'*|k6|terraform*) continue ;; esac # terraform*: scripts/infra-tools.sh
    go_tool "$name" "$module"
  done < scripts/go-tools.txt
  # The Pyroscope and Alloy stand-ins the profile tests build (test/support/pyroscope-standin,
  # pinned by its go.sum): built once here (about 1.5 minutes cold, seconds once Go's build
  # cache holds it), so the tests' own builds are quick.
  stamp="$PWD/.cache/pyroscope-standin.$(sha256sum test/support/pyroscope-standin/go.sum | cut -c1-16)"
  if [ ! -f "$stamp" ]; then
    log "go build test/support/pyroscope-standin"
    (cd test/support/pyroscope-standin && go build -trimpath -o /dev/null .)
    mkdir -p .cache && touch "$stamp"
  fi
fi
log "done"
