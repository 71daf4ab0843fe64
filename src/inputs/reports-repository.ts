import { InputError } from '../util/errors.ts';
import { quoteForMessage } from './patterns.ts';

/** owner/name as GitHub allows them: an account of up to 39 characters, a repository of up to 100. */
const REPOSITORY = /^[A-Za-z0-9-]{1,39}\/[A-Za-z0-9._-]{1,100}$/;

/** Where the report pull request goes when the workflow names a reports repository, and how publish writes there. */
export interface ReportsTarget {
  owner: string;
  repo: string;
  /** It is another repository than the calling one. */
  elsewhere: boolean;
  /** The workflow mints the GitHub App's installation token for it (an App, and no reports-token). */
  mintAppToken: boolean;
}

/**
 * The reports-repository input, checked in the first job, before the bench is paid for:
 * its form, and that something can write there. The workflow's own token reaches only the
 * calling repository, so another repository needs the reports-token secret or a GitHub App
 * (app-client-id); with the secret given, no App token is minted for it.
 */
export function validateReportsRepository(
  value: string | undefined,
  o: { repository: string | undefined; reportsToken: boolean; app: boolean },
): ReportsTarget | null {
  if (value === undefined || value === '') return null;
  if (!REPOSITORY.test(value) || value.split('/').some((part) => part === '.' || part === '..')) {
    throw new InputError(
      `reports-repository: ${quoteForMessage(value)} is not owner/name of a GitHub repository; give the repository that gets the report pull requests, such as acme/perf-reports, or leave it empty for this repository`,
    );
  }
  const [owner, repo] = value.split('/') as [string, string];
  const elsewhere = o.repository === undefined || value.toLowerCase() !== o.repository.toLowerCase();
  if (elsewhere && !o.reportsToken && !o.app) {
    throw new InputError(
      `reports-repository: ${value} is another repository than ${o.repository ?? 'the calling one'}, and the workflow's own token reaches only that one; ` +
        `pass the reports-token secret (a token with contents and pull-requests write on ${value}), or name a GitHub App installed on ${value} (app-client-id and the app-private-key secret)`,
    );
  }
  return { owner, repo, elsewhere, mintAppToken: elsewhere && o.app && !o.reportsToken };
}
