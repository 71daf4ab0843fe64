import type { HealthQuery } from '../../config/schema.ts';

/**
 * The nine coordinator health queries and thresholds of the ceiling-test report
 * (shared/seeds/ceiling-tests-v2-report.md, "Coordinator metrics"). App nodes are scraped
 * as `app*`, the proxy's node_exporter as `proxy:9100`.
 *
 * Three numerators count failures, and a labelled Prometheus counter has no series until
 * its first increment (mattermost_api_time{status_code}; load-test-ng's
 * loadtest_http_errors_total{status_code} and loadtest_http_timeouts_total{path,method} are
 * CounterVecs, performance/metrics.go). On a healthy server they stay absent, `sum(...)`
 * is an empty vector and the seed's query has no value at all (load-test-ng's monitor
 * logs that and skips the query, coordinator/performance/monitor.go runQueries). So those
 * numerators read absent as zero (`or vector(0)`), while the denominators, the request
 * counters that exist as soon as the target serves anything, stay bare: a dead target
 * still gives no data, never a healthy 0 %.
 */
export const MATTERMOST_HEALTH_QUERIES: readonly HealthQuery[] = [
  {
    name: 'HTTP 5xx server errors (%)',
    query: '((sum(rate(mattermost_api_time_count{status_code=~"5.."}[1m])) or vector(0))/sum(rate(mattermost_api_time_count[1m])))*100',
    threshold: 0.025,
  },
  {
    name: 'Average client request duration (s)',
    query: 'sum(rate(loadtest_http_request_time_sum[1m]))/sum(rate(loadtest_http_request_time_count[1m]))',
    threshold: 0.1,
  },
  {
    name: '99th percentile of client request duration (s)',
    query: 'histogram_quantile(0.99, sum(rate(loadtest_http_request_time_bucket[1m])) by (le))',
    threshold: 2,
  },
  {
    name: 'HTTP 5xx client errors (%)',
    query: '((sum(rate(loadtest_http_errors_total{status_code=~"5.."}[1m])) or vector(0))/sum(rate(loadtest_http_request_time_count[1m])))*100',
    threshold: 0.025,
  },
  {
    name: 'Client timeouts (%)',
    query: '((sum(rate(loadtest_http_timeouts_total[1m])) or vector(0))/sum(rate(loadtest_http_request_time_count[1m]))) * 100',
    threshold: 0.025,
  },
  {
    name: 'CPU utilization - Average of app nodes (%)',
    query: '100 - 100 * (avg(irate(node_cpu_seconds_total{instance=~"app.*",mode="idle"}[5m])))',
    threshold: 85,
  },
  {
    name: 'Memory utilization - Average of app nodes (%)',
    query: '100 - 100 * avg(node_memory_MemAvailable_bytes{instance=~"app.*"} / node_memory_MemTotal_bytes{instance=~"app.*"})',
    threshold: 85,
  },
  {
    name: 'TCP retransmissions in the app nodes (%)',
    query: '(avg(rate(node_netstat_Tcp_RetransSegs{instance=~"app.*"}[1m])) / avg(rate(node_netstat_Tcp_OutSegs{instance=~"app.*"}[1m]))) * 100',
    threshold: 1,
  },
  {
    name: 'TCP retransmissions in the proxy node (%)',
    query: '(avg(rate(node_netstat_Tcp_RetransSegs{instance=~"proxy:9100"}[1m])) / avg(rate(node_netstat_Tcp_OutSegs{instance=~"proxy:9100"}[1m]))) * 100',
    threshold: 1,
  },
].map((q) => ({ ...q, minInterval: 0, enabled: true }));

/**
 * Relative action frequencies of the ceiling tests ("Action frequencies" table),
 * computed by the seed authors from their largest Cloud customer's peak hours.
 */
export const CEILING_ACTION_FREQUENCIES: Readonly<Record<string, number>> = {
  SwitchChannel: 6.5219,
  ScrollChannel: 1.9873,
  UnreadCheck: 1,
  CreatePost: 1,
  OpenDirectOrGroupChannel: 0.9843,
  ViewGlobalThreads: 0.6023,
  UpdateThreadRead: 0.3236,
  ClickPermalink: 0.3,
  ViewThread: 0.2841,
  ReconnectWebSocket: 0.144,
  AddReaction: 0.1306,
  EditPost: 0.04,
  SearchUsers: 0.032,
  ClickUserProfile: 0.03,
  SearchPosts: 0.0218,
  SearchGroupChannels: 0.0204,
  SearchChannels: 0.015,
  CreateDirectChannel: 0.0055,
  UnfollowThread: 0.005,
  JoinChannel: 0.0049,
  DeletePost: 0.0049,
  UpdateSidebarCategory: 0.004,
  CreateGroupChannel: 0.0029,
  UpdateCustomStatus: 0.0028,
  RemoveCustomStatus: 0.0026,
  FullReload: 0.0008,
  LogoutLogin: 0.0006,
  CreatePostReminder: 0.0005,
  FollowThread: 0.0005,
  CreatePrivateChannel: 0.0002,
  SwitchTeam: 0.0001,
  CreateSidebarCategory: 0.0001,
  CreatePublicChannel: 0.0001,
  MarkAllThreadsInTeamAsRead: 0.0001,
  CreateAclPost: 0.0001,
  AckToPost: 0.0001,
  CreatePersistentNotificationPost: 0.0001,
  GenerateUserReport: 0.0001,
};

/** Mattermost release tarball, as used by the seed benches (`MattermostDownloadURL`). */
export const MATTERMOST_DOWNLOAD_URL = 'https://releases.mattermost.com/{version}/mattermost-{version}-linux-amd64.tar.gz';
