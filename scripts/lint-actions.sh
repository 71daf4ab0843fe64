#!/usr/bin/env bash
# actionlint on every workflow, then every action.yml against the action metadata schema
# (test/support/action-metadata.ts, written from GitHub's documented metadata syntax).
set -euo pipefail
cd "$(dirname "$0")/.."

ACTIONLINT="$(command -v actionlint || true)"
if [ -z "$ACTIONLINT" ] && [ -x "$(go env GOPATH 2>/dev/null)/bin/actionlint" ]; then ACTIONLINT="$(go env GOPATH)/bin/actionlint"; fi
if [ -z "$ACTIONLINT" ] && [ -x .cache/bin/actionlint ]; then ACTIONLINT=.cache/bin/actionlint; fi
if [ -z "$ACTIONLINT" ]; then
  echo "actionlint not found; install it: go install github.com/rhysd/actionlint/cmd/actionlint@v1.7.12" >&2
  exit 1
fi
"$ACTIONLINT" -version | head -1
# `concurrency.queue` (GitHub, May 2026: "concurrency groups now allow larger queues") is
# newer than actionlint v1.7.12, the latest release; only that one message is ignored.
"$ACTIONLINT" -ignore 'unexpected key "queue" for "concurrency" section' .github/workflows/*.yml
echo "actionlint: ok"

node --import tsx --test test/github/action-metadata.test.ts
