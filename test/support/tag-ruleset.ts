/**
 * The tag ruleset that makes `loadgate` required before a release (docs/github.md), as
 * the request body of "Create a repository ruleset" (POST /repos/{owner}/{repo}/rulesets;
 * GitHub's OpenAPI description, @octokit/openapi 23.0.2, operation
 * repos/create-repo-ruleset). test/github/ruleset.test.ts sends it to the stand-in, which
 * validates it against that description.
 */

/** The GitHub Actions app: check runs created with a workflow's GITHUB_TOKEN come from it. */
const GITHUB_ACTIONS_APP_ID = 15368;

export interface TagRulesetOptions {
  /** The check name (the workflow's check-name input). */
  checkName: string;
  /** Release tags the rule guards, as ruleset fnmatch patterns without refs/tags/. */
  releaseTags: string[];
  /** Candidate tags the gate runs on; left out of the rule so they can be pushed. */
  candidateTags: string[];
}

const DEFAULT_TAG_RULESET: TagRulesetOptions = { checkName: 'loadgate', releaseTags: ['v*'], candidateTags: ['v*-rc*'] };

export function tagRulesetRequest(options: TagRulesetOptions = DEFAULT_TAG_RULESET) {
  const refs = (patterns: string[]) => patterns.map((p) => `refs/tags/${p}`);
  return {
    name: `${options.checkName} before release tags`,
    target: 'tag' as const,
    enforcement: 'active' as const,
    conditions: { ref_name: { include: refs(options.releaseTags), exclude: refs(options.candidateTags) } },
    rules: [
      // A release tag can only be created on a commit whose check passed: loadgate
      // concludes `success` only for pass, so fail, inconclusive and no verdict all block.
      {
        type: 'required_status_checks' as const,
        parameters: {
          required_status_checks: [{ context: options.checkName, integration_id: GITHUB_ACTIONS_APP_ID }],
          strict_required_status_checks_policy: false,
          do_not_enforce_on_create: false,
        },
      },
      // A release tag, once created, is never moved or deleted.
      { type: 'update' as const },
      { type: 'deletion' as const },
    ],
  };
}
