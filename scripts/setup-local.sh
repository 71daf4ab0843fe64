#!/usr/bin/env bash
# Prepares a Debian/Ubuntu machine for the local bench (`loadgate run` with bench.kind: local).
# Idempotent: installs only what is missing, then makes sure none of the system services
# those packages start is running (loadgate starts its own instances on 127.0.0.1, with
# data dirs under the run dir). Needs root for apt-get and useradd; as a normal user it
# only checks. Nothing here downloads anything except Debian packages.
set -euo pipefail

log() { printf 'setup-local: %s\n' "$*"; }

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; fi
fi

# command -> Debian package providing it
declare -A NEED=(
  [initdb]=postgresql
  [nginx]=nginx-light
  [prometheus]=prometheus
  [prometheus-node-exporter]=prometheus-node-exporter
  [taskset]=util-linux
  [setpriv]=util-linux
  [go]=golang-go
)

have_initdb() { ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; }

missing=()
for cmd in "${!NEED[@]}"; do
  case "$cmd" in
    initdb) have_initdb || missing+=("${NEED[$cmd]}") ;;
    go) command -v go >/dev/null 2>&1 || [ -x /usr/local/go/bin/go ] || missing+=("${NEED[$cmd]}") ;;
    *) command -v "$cmd" >/dev/null 2>&1 || missing+=("${NEED[$cmd]}") ;;
  esac
done
# Python with venv + pip for the Synapse virtualenvs.
PY="${LOADGATE_PYTHON:-python3}"
if ! command -v "$PY" >/dev/null 2>&1; then
  missing+=(python3 python3-venv)
elif ! "$PY" -c 'import venv, ensurepip' >/dev/null 2>&1; then
  missing+=(python3-venv)
fi

if [ "${#missing[@]}" -gt 0 ]; then
  # Keep the order stable and the list unique.
  mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
  log "installing: ${missing[*]}"
  # Package scripts must not start services we would then have to stop.
  export DEBIAN_FRONTEND=noninteractive
  policy_created=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
    $SUDO chmod +x /usr/sbin/policy-rc.d
    policy_created=1
  fi
  $SUDO apt-get update -q
  # nginx-light is gone from newer Debian releases; plain nginx works the same here.
  for i in "${!missing[@]}"; do
    if [ "${missing[$i]}" = nginx-light ] && ! apt-cache show nginx-light >/dev/null 2>&1; then missing[$i]=nginx; fi
  done
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
  if [ -n "$policy_created" ]; then $SUDO rm -f /usr/sbin/policy-rc.d; fi
else
  log "packages already installed"
fi

# Stop and disable the system instances: loadgate runs its own on free loopback ports.
for svc in postgresql nginx prometheus prometheus-node-exporter; do
  if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
    if systemctl is-active --quiet "$svc" 2>/dev/null || systemctl is-enabled --quiet "$svc" 2>/dev/null; then
      log "stopping and disabling the system $svc service"
      $SUDO systemctl disable --now "$svc" >/dev/null 2>&1 || true
    fi
  elif [ -x "/etc/init.d/$svc" ]; then
    if $SUDO "/etc/init.d/$svc" status >/dev/null 2>&1; then
      log "stopping the system $svc service"
      $SUDO "/etc/init.d/$svc" stop >/dev/null 2>&1 || true
    fi
    if command -v update-rc.d >/dev/null 2>&1; then $SUDO update-rc.d "$svc" disable >/dev/null 2>&1 || true; fi
  fi
done

# PostgreSQL refuses to run as root: as root, loadgate runs it as this system user.
if [ "$(id -u)" -eq 0 ] || [ -n "$SUDO" ]; then
  if ! id loadgate >/dev/null 2>&1; then
    log "creating the unprivileged system user 'loadgate' (runs PostgreSQL and nginx workers)"
    $SUDO useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin loadgate
  fi
fi

# Report what the bench will use.
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
log "PostgreSQL: $("$pg_bin/postgres" --version)"
log "nginx: $(nginx -v 2>&1)"
log "Prometheus: $(prometheus --version 2>&1 | head -1)"
log "node_exporter: $(prometheus-node-exporter --version 2>&1 | head -1)"
log "Python: $("$PY" --version 2>&1)"
log "Go: $( (command -v go >/dev/null && go version) || /usr/local/go/bin/go version)"
log "ready (k6 and Synapse are installed into the cache by loadgate itself on first use)"
