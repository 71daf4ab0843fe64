#!/usr/bin/env bash
# Says, before the bench is paid for, whether the GitHub App named by app-client-id could
# mint every token the gate will need: the check run's (checks write), the publish job's
# (checks, contents and pull-requests write on this repository) and, when reports go to
# another repository without a reports-token, that repository's (contents and
# pull-requests write). GitHub refuses a token whose permissions the App was not granted,
# or for a repository it is not installed on (actions/create-github-app-token prints
# GitHub's answer in its step). Writes the step output problem and exits 3 when one failed.
# env: LG_APP_TOKEN, LG_PUBLISH_TOKEN, LG_REPORTS_TOKEN (the mint steps' outcomes: success,
# failure or skipped), LG_REPORTS_OWNER, LG_REPORTS_NAME (validated by check-inputs), GITHUB_REPOSITORY.
# shellcheck source=action/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

repo="${GITHUB_REPOSITORY:-this repository}"
fix="give the App those repository permissions (its settings, Permissions and events; then accept them on the installation) and install it on each repository named (its settings, Install App), then re-run; GitHub's answer is in the log of the step that failed"
problems=()
if [ "${LG_APP_TOKEN:-}" != success ]; then
  problems+=("the check run's token (checks write, contents read on $repo): its step \"Mint the check run's App token\" ended ${LG_APP_TOKEN:-unknown}")
fi
if [ "${LG_PUBLISH_TOKEN:-}" != success ]; then
  problems+=("the publish job's token (checks, contents and pull-requests write on $repo, for the check run and the report pull request): its step \"Mint the publish job's App token now\" ended ${LG_PUBLISH_TOKEN:-unknown}")
fi
if [ "${LG_REPORTS_TOKEN:-skipped}" != skipped ] && [ "$LG_REPORTS_TOKEN" != success ]; then
  problems+=("the reports repository's token (contents and pull-requests write on $LG_REPORTS_OWNER/$LG_REPORTS_NAME): its step \"Mint the reports repository's App token now\" ended $LG_REPORTS_TOKEN")
fi
if [ "${#problems[@]}" -eq 0 ]; then
  echo "tokens: the GitHub App minted every token the gate will publish with"
  exit 0
fi
problem="the GitHub App (app-client-id) could not mint $(
  IFS=';'
  printf '%s' "${problems[*]}" | sed 's/;/; nor /g'
), so nothing was provisioned: $fix"
echo "::error::$problem" >&2
set_output problem "$problem"
exit 3
