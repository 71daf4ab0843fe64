import type { NodesServer } from '../chat-server.ts';
import { checkClientLicence, MATTERMOST_SERIES_QUERY, MattermostSeriesWatch } from './licence.ts';
import { stripLeadingV } from './version.ts';

/**
 * Mattermost on the AWS bench's app nodes (installed and started by the nodes' own
 * `loadgate-mattermost` helper, infra/aws): what the bench checks after a start (a
 * licence: without one Mattermost serves no metrics) and watches during a run (its series
 * appearing at all).
 */
export const mattermostNodes: NodesServer = {
  job: 'mattermost',
  // X-Version-Id starts with the release's numbers: 10.12.0.16234.abc.false.
  expectedVersion: (version) => stripLeadingV(version).replace(/-.*$/, ''),
  checkStarted: checkClientLicence,
  runWatch(query) {
    const watch = new MattermostSeriesWatch(() => query(MATTERMOST_SERIES_QUERY));
    return { check: (elapsedSec) => watch.check(elapsedSec) };
  },
};
