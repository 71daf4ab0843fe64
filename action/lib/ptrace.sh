#!/usr/bin/env bash
# Lets the local bench's profiler attach to the target on a GitHub-hosted runner.
# py-spy attaches with ptrace; Ubuntu runners boot with kernel.yama.ptrace_scope = 1, which
# lets only a process's ancestors attach, and the gate runs as the runner user, not root.
# The runner is a throw-away VM whose user has passwordless sudo, so the scope is lowered
# there. A self-hosted runner is someone's machine: nothing is changed, and a gate with
# profile: on refuses up front with this same fix (src/chat-servers/synapse/py-spy.ts).
# env: RUNNER_ENVIRONMENT (github-hosted|self-hosted, set by the runner); for tests,
# LG_PTRACE_SCOPE_FILE and LG_UID.
set -euo pipefail
scope_file="${LG_PTRACE_SCOPE_FILE:-/proc/sys/kernel/yama/ptrace_scope}"
uid="${LG_UID:-$(id -u)}"
[ -r "$scope_file" ] || exit 0
scope="$(cat "$scope_file")"
if [ "$scope" = 0 ] || [ "$uid" = 0 ]; then exit 0; fi
if [ "$scope" = 3 ]; then
  echo "::notice::kernel.yama.ptrace_scope is 3 (no attaching until a reboot): a gate with profile: on is refused here; set profile: off"
  exit 0
fi
if [ "${RUNNER_ENVIRONMENT:-}" != github-hosted ]; then
  echo "::notice::kernel.yama.ptrace_scope is $scope and this runner is not GitHub-hosted, so it is left alone: a gate with profile: on needs 'sudo sysctl -w kernel.yama.ptrace_scope=0' on this machine first, or profile: off"
  exit 0
fi
if sudo -n sysctl -w kernel.yama.ptrace_scope=0 >/dev/null; then
  echo "kernel.yama.ptrace_scope lowered from $scope to 0 on this GitHub-hosted runner, so the profiler can attach"
else
  echo "::warning::could not lower kernel.yama.ptrace_scope from $scope (sudo -n sysctl failed): a gate with profile: on is refused here; set profile: off"
fi
