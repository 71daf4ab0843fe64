#!/usr/bin/env bash
# actions/checkout stand-in for act (see action.yml). env: CO_REPOSITORY, CO_REF, CO_PATH,
# LOADGATE_ACT_CHECKOUT_REPOSITORY, LOADGATE_ACT_CHECKOUT_SOURCE.
set -euo pipefail
if [ -z "$CO_PATH" ]; then
  # act copies the repository it runs in into the workspace only for a step it knows as
  # actions/checkout without a ref (its isLocalCheckout). This stand-in replaces that
  # action, so act copies nothing: the stand-in checks the repository out itself, unless
  # the workspace already is that repository. As actions/checkout does, a ref (the
  # candidate tag, prepare's commit) is what gets checked out: the files git holds at that
  # commit, after the workspace is cleaned (its `clean: true`); a ref the repository lacks
  # fails the step, as it fails to fetch. Without a ref (a calibration: the dispatched
  # commit) it is the work tree of the repository act runs in, as act copies it.
  src=${LOADGATE_ACT_WORKSPACE_SOURCE:-}
  if [ -d "$src" ] && [ "$(cd "$src" && pwd -P)" != "$(pwd -P)" ]; then
    if [ -n "$CO_REF" ]; then
      if ! commit="$(git -C "$src" rev-parse --verify --quiet "${CO_REF}^{commit}")"; then
        echo "::error::checkout stand-in: $src has no ref $CO_REF (actions/checkout fails to fetch a ref the repository lacks)" >&2
        exit 1
      fi
      find . -mindepth 1 -maxdepth 1 -exec rm -rf -- {} +
      git -C "$src" archive --format=tar "$commit" | tar -xf - -C .
      echo "checkout stand-in: host mode, $CO_REF ($commit): the files of that commit in $src"
      exit 0
    fi
    git -C "$src" ls-files -z --cached --others --exclude-standard \
      | tar -C "$src" --null --no-recursion --ignore-failed-read -T - -cf - \
      | tar -xf - -C .
    echo "checkout stand-in: host mode, the dispatched commit: the work tree of $src, as act copies it"
    exit 0
  fi
  echo "checkout stand-in: host mode, the workspace is the repository"
  exit 0
fi
if [ "$CO_REPOSITORY" != "${LOADGATE_ACT_CHECKOUT_REPOSITORY:-}" ] || [ ! -d "${LOADGATE_ACT_CHECKOUT_SOURCE:-}" ]; then
  echo "checkout stand-in: no source for $CO_REPOSITORY (set LOADGATE_ACT_CHECKOUT_REPOSITORY and LOADGATE_ACT_CHECKOUT_SOURCE)" >&2
  exit 1
fi
case "$CO_PATH" in /* | *..*) echo "checkout stand-in: path must stay inside the workspace" >&2; exit 1 ;; esac
rm -rf -- "$CO_PATH"
mkdir -p -- "$CO_PATH"
# From a git work tree: the files git would commit, as they are in the work tree (edits
# and new files included, so a test runs what is being changed); ignored files
# (node_modules, .cache, tmp) are left behind, as a checkout of a tag would leave them.
# From a plain directory (a release tree a test prepared): all of it.
if git -C "$LOADGATE_ACT_CHECKOUT_SOURCE" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git -C "$LOADGATE_ACT_CHECKOUT_SOURCE" ls-files -z --cached --others --exclude-standard \
    | tar -C "$LOADGATE_ACT_CHECKOUT_SOURCE" --null --no-recursion --ignore-failed-read -T - -cf - \
    | tar -xf - -C "$CO_PATH"
else
  cp -R "$LOADGATE_ACT_CHECKOUT_SOURCE/." "$CO_PATH/"
fi
echo "checkout stand-in: $CO_REPOSITORY@${CO_REF:-HEAD} -> $CO_PATH ($(find "$CO_PATH" -type f | wc -l) files)"
