#!/usr/bin/env bash
# Fails when dist/ is not what `npm run build` produces from the current sources, so the
# composite actions never run a stale bundle. Read-only for git: it only compares.
set -euo pipefail
cd "$(dirname "$0")/.."

npm run --silent build >/dev/null
if ! git diff --quiet -- dist/ || [ -n "$(git ls-files --others --exclude-standard -- dist/)" ]; then
  echo "dist/ is stale: run \`npm run build\` and commit dist/." >&2
  git --no-pager diff --stat -- dist/ >&2 || true
  git ls-files --others --exclude-standard -- dist/ >&2
  exit 1
fi
echo "dist/ is up to date"
