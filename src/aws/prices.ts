/**
 * On-demand prices the plan multiplies by instance-hours. us-east-1, Linux,
 * shared tenancy, USD per hour unless the unit says otherwise.
 *
 * Transcribed from AWS's public price pages (EC2, Aurora PostgreSQL "Aurora
 * Standard", OpenSearch Service, VPC) on PRICES_AS_OF. This machine cannot reach
 * the AWS Price List API, so the table was not fetched by a script: re-check it
 * with the `aws pricing get-products` commands in docs/aws.md before trusting a
 * budget limit that sits close to an estimate.
 */
export const PRICES_AS_OF = '2026-11-21';
export const PRICES_REGION = 'us-east-1';

/** EC2 instance, per instance-hour (billed per second, 60 s minimum). */
export const EC2_HOURLY_USD: Readonly<Record<string, number>> = {
  'c5.xlarge': 0.17,
  'c5.2xlarge': 0.34,
  'c5.4xlarge': 0.68,
  'c7i.large': 0.08925,
  'c7i.xlarge': 0.1785,
  'c7i.2xlarge': 0.357,
  'c7i.4xlarge': 0.714,
  'c7i.8xlarge': 1.428,
  'm6i.4xlarge': 0.768,
  'm6in.8xlarge': 2.22768,
  'm7i.large': 0.1008,
  'm7i.xlarge': 0.2016,
  'm7i.2xlarge': 0.4032,
  'm7i.4xlarge': 0.8064,
  'm7i.8xlarge': 1.6128,
};

/** Aurora PostgreSQL instance (Aurora Standard), per instance-hour (billed per second, 10 min minimum). */
export const AURORA_HOURLY_USD: Readonly<Record<string, number>> = {
  'db.r6g.large': 0.26,
  'db.r6g.xlarge': 0.519,
  'db.r6g.2xlarge': 1.038,
  'db.r6g.4xlarge': 2.076,
  'db.r7g.large': 0.276,
  'db.r7g.xlarge': 0.552,
  'db.r7g.2xlarge': 1.104,
  'db.r7g.4xlarge': 2.208,
  'db.r7g.8xlarge': 4.416,
};

/** OpenSearch Service data node, per instance-hour (partial hours are billed as full hours). */
export const OPENSEARCH_HOURLY_USD: Readonly<Record<string, number>> = {
  'r6g.large.search': 0.167,
  'r6g.xlarge.search': 0.335,
  'r6g.2xlarge.search': 0.669,
};

export const OTHER_PRICES_USD = {
  /** NAT gateway, per hour (data processing, $0.045/GB, is not estimated). */
  natGatewayHour: 0.045,
  /** Public IPv4 address, per hour (agents, metrics node, NAT gateway). */
  publicIpv4Hour: 0.005,
  /** gp3 EBS storage, per GB-month (730 hours). */
  gp3GbMonth: 0.08,
  /** OpenSearch gp3 storage, per GB-month. */
  openSearchGp3GbMonth: 0.122,
} as const;

export const HOURS_PER_MONTH = 730;
