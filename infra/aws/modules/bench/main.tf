# The whole bench of the seed reports as one module: network, one security group
# per role, Mattermost app nodes behind an nginx proxy, load agents, a metrics
# node, Aurora PostgreSQL and optionally OpenSearch. Sizes and counts come from
# variables (src/aws/presets.ts fills them from a preset name).

data "aws_availability_zones" "available" {
  #checkov:skip=CKV_AWS_394:Only used when availability_zones is empty, to take the first two zones of the region; set availability_zones to pin them.
  state = "available"

  filter {
    name   = "opt-in-status"
    values = ["opt-in-not-required"]
  }
}

data "aws_region" "current" {}

# Canonical's Ubuntu 22.04 LTS (the seed benches' OS), newest build.
data "aws_ami" "ubuntu" {
  count = var.ami_id == null ? 1 : 0

  most_recent = true
  owners      = ["099720109477"]

  filter {
    name = "name"
    values = [
      "ubuntu/images/hvm-ssd/ubuntu-jammy-22.04-amd64-server-*",
      "ubuntu/images/hvm-ssd-gp3/ubuntu-jammy-22.04-amd64-server-*",
    ]
  }

  filter {
    name   = "virtualization-type"
    values = ["hvm"]
  }
}

locals {
  availability_zones = length(var.availability_zones) == 2 ? var.availability_zones : slice(data.aws_availability_zones.available.names, 0, 2)
  ami_id             = var.ami_id != null ? var.ami_id : data.aws_ami.ubuntu[0].id
  # Provider 6 deprecates `name` and `id` for `region` (versions.tf requires 6).
  region = data.aws_region.current.region

  # The proxy and the metrics node get fixed addresses: the app nodes' site URL
  # and the agents' targets need them before those instances exist, and the
  # proxy and metrics node in turn need the app and agent addresses.
  # Both sit in the subnets' reserved ranges (.8-.15), which AWS never assigns.
  proxy_private_ip   = cidrhost(module.network.private_fixed_cidr_block, 2)
  metrics_private_ip = cidrhost(module.network.public_fixed_cidr_block, 2)

  # As on the seed benches (load-test-ng's deployer), a proxy fronts the app
  # nodes only when there is more than one; a single node (the ceiling tests'
  # L.110) is reached directly, at a fixed address from the same reserved range.
  proxy_enabled        = var.app_count > 1
  single_app_ip        = cidrhost(module.network.private_fixed_cidr_block, 3)
  proxy_url            = local.proxy_enabled ? "http://${local.proxy_private_ip}" : "http://${local.single_app_ip}:8065"
  proxy_instance_id    = local.proxy_enabled ? module.proxy[0].ids[0] : null
  proxy_instance_count = local.proxy_enabled ? 1 : 0

  # A duet (var.duet) runs a second Mattermost, slot b, on every app node, each
  # of its ports 100 above slot a's: 8165 (site), 8167 (metrics), 8174 (gossip).
  # Users reach it through the proxy's :8080, or on the single app node's :8165
  # as they reach slot a on :8065. Agents 0 .. n/2-1 drive slot a, the rest slot b.
  slot_b_url      = local.proxy_enabled ? "http://${local.proxy_private_ip}:8080" : "http://${local.single_app_ip}:8165"
  agents_per_slot = floor(var.agent_count / 2)
  duet_slots = [
    for slot in [
      { slot = "a", proxy_url = local.proxy_url, prometheus_url = "http://${module.metrics.public_ips[0]}:9090", app_port = 8065, metrics_port = 8067, agent_indices = range(0, local.agents_per_slot) },
      { slot = "b", proxy_url = local.slot_b_url, prometheus_url = "http://${module.metrics.public_ips[0]}:9091", app_port = 8165, metrics_port = 8167, agent_indices = range(local.agents_per_slot, var.agent_count) },
    ] : slot if var.duet
  ]

  # What the metrics node scrapes on the agents: k6 has no Prometheus endpoint of
  # its own, so each agent runs loadgate's exporter next to it (port 6566);
  # load-test-ng's agent API serves /metrics on its own port.
  agent_metrics_port = var.load_engine == "k6" ? 6566 : local.agent_api_port
  # Each engine's own API port unless the caller names one: k6's REST API
  # listens on 6565, load-test-ng's agent API (ltapi) on 4000.
  agent_api_port = var.agent_api_port != null ? var.agent_api_port : (var.load_engine == "k6" ? 6565 : 4000)

  templates = "${path.module}/templates"

  # Pyroscope's HTTP port on the metrics node (metrics.sh.tftpl runs it there).
  pyroscope_port = 4040

  # What the controller reaches, per security group: Prometheus (health, results),
  # Grafana (dashboard, snapshots) and Pyroscope (profiles; pyroscope_url points here)
  # on the metrics node, and the agents' control API. controller_cidr_blocks get these
  # rules at apply; a workflow job whose runner is not in them admits its own address to
  # exactly these ports for its lifetime (output controller_ingress).
  controller_ports = {
    metrics = concat([
      { description = "Prometheus API for the controller", from_port = 9090, to_port = 9090 },
      { description = "Grafana API for the controller", from_port = 3000, to_port = 3000 },
      { description = "Pyroscope API for the controller", from_port = local.pyroscope_port, to_port = local.pyroscope_port },
      ], [
      for rule in [{ description = "Prometheus of duet slot b for the controller", from_port = 9091, to_port = 9091 }] : rule if var.duet
    ])
    agent = [
      { description = "Agent control API for the controller", from_port = local.agent_api_port, to_port = local.agent_api_port },
    ]
  }

  # Rules shared by several roles.
  ssh_rules = [
    for cidr in var.ssh_cidr_blocks : { description = "SSH from ${cidr}", from_port = 22, to_port = 22, cidr_ipv4 = cidr }
  ]
  node_exporter_rule = { description = "node_exporter scraped by the metrics node", from_port = 9100, to_port = 9100, referenced_security_group_id = module.metrics_sg.id }
  # Nodes download releases and packages over HTTP(S) and talk to each other
  # inside the VPC; nothing else leaves.
  egress_rules = [
    { description = "HTTP to package mirrors", from_port = 80, to_port = 80, cidr_ipv4 = "0.0.0.0/0" },
    { description = "HTTPS to releases and AWS APIs", from_port = 443, to_port = 443, cidr_ipv4 = "0.0.0.0/0" },
    { description = "Bench traffic inside the VPC", from_port = 0, to_port = 65535, cidr_ipv4 = var.vpc_cidr },
  ]
  # Mattermost's cluster gossip (8074) speaks TCP and UDP between app nodes.
  app_egress_rules = concat(local.egress_rules, [
    { description = "Cluster gossip (UDP) to the other app nodes", ip_protocol = "udp", from_port = 8074, to_port = 8074, cidr_ipv4 = var.vpc_cidr },
    ], [
    for rule in [
      { description = "Duet slot b cluster gossip (UDP) to the other app nodes", ip_protocol = "udp", from_port = 8174, to_port = 8174, cidr_ipv4 = var.vpc_cidr },
    ] : rule if var.duet
  ])

  # A duet's slot b, opened as slot a's ports are in the groups below. Its
  # cluster needs only the gossip port: ClusterSettings has no other port
  # (GossipPort alone, in mattermost/mattermost server/public/model/config.go);
  # slot a's 8075 is the old streaming port, kept as it was.
  duet_app_ingress_rules = [
    for rule in [
      { description = "Duet slot b Mattermost from the proxy", from_port = 8165, to_port = 8165, referenced_security_group_id = module.proxy_sg.id },
      { description = "Duet slot b Mattermost from the load agents", from_port = 8165, to_port = 8165, referenced_security_group_id = module.agent_sg.id },
      { description = "Duet slot b metrics and pprof for the metrics node", from_port = 8167, to_port = 8167, referenced_security_group_id = module.metrics_sg.id },
      { description = "Duet slot b cluster gossip between app nodes", from_port = 8174, to_port = 8174, self = true },
      { description = "Duet slot b cluster gossip (UDP) between app nodes", ip_protocol = "udp", from_port = 8174, to_port = 8174, self = true },
    ] : rule if var.duet
  ]
  duet_proxy_ingress_rules = [
    for rule in [
      { description = "Duet slot b HTTP from the load agents", from_port = 8080, to_port = 8080, referenced_security_group_id = module.agent_sg.id },
    ] : rule if var.duet
  ]

  common_user_data_vars = {
    bench_name = var.name
    region     = local.region
    expires_at = var.expires_at
  }
}

module "network" {
  source = "../network"

  name               = var.name
  cidr_block         = var.vpc_cidr
  availability_zones = local.availability_zones
}

# ---------------------------------------------------------------------------
# Encryption key and secrets
# ---------------------------------------------------------------------------

data "aws_caller_identity" "current" {}

data "aws_partition" "current" {}

data "aws_iam_policy_document" "kms" {
  #checkov:skip=CKV_AWS_109:A key policy's "*" resource is the key itself; this is the default policy that delegates to the account's IAM policies.
  #checkov:skip=CKV_AWS_111:As CKV_AWS_109: the resource "*" of a key policy is this key only.
  #checkov:skip=CKV_AWS_356:As CKV_AWS_109: the resource "*" of a key policy is this key only.
  # The account's IAM policies decide who uses the key (the usual default policy,
  # written out so it is reviewed).
  statement {
    sid       = "AccountAdministersKey"
    actions   = ["kms:*"]
    resources = ["*"]

    principals {
      type        = "AWS"
      identifiers = ["arn:${data.aws_partition.current.partition}:iam::${data.aws_caller_identity.current.account_id}:root"]
    }
  }

  # The Aurora log group is encrypted with this key; CloudWatch Logs may use it
  # for this account's log groups only.
  statement {
    sid       = "CloudWatchLogsEncryptsBenchLogs"
    actions   = ["kms:Encrypt*", "kms:Decrypt*", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:Describe*"]
    resources = ["*"]

    principals {
      type        = "Service"
      identifiers = ["logs.${local.region}.amazonaws.com"]
    }

    condition {
      test     = "ArnLike"
      variable = "kms:EncryptionContext:aws:logs:arn"
      values   = ["arn:${data.aws_partition.current.partition}:logs:${local.region}:${data.aws_caller_identity.current.account_id}:log-group:*"]
    }
  }
}

resource "aws_kms_key" "this" {
  description             = "loadgate bench ${var.name}: Aurora, OpenSearch and bench secrets"
  deletion_window_in_days = 7
  enable_key_rotation     = true
  policy                  = data.aws_iam_policy_document.kms.json
}

resource "aws_kms_alias" "this" {
  name          = "alias/${var.name}"
  target_key_id = aws_kms_key.this.key_id
}

# The metrics node creates a Grafana service account (Editor) at boot and puts
# its token here, so the token is never in state or user data; the gate reads
# it to upload the dashboard and create snapshots. The admin password stays on
# the node (/etc/loadgate/grafana.env, root only).
resource "aws_secretsmanager_secret" "grafana_token" {
  #checkov:skip=CKV2_AWS_57:The secret lives as long as one bench (hours) and is deleted with it; rotation would only break the running gate.
  name                    = "${var.name}/grafana-token"
  description             = "Grafana service-account token of loadgate bench ${var.name}"
  kms_key_id              = aws_kms_key.this.arn
  recovery_window_in_days = 0
}

# ---------------------------------------------------------------------------
# Security groups: one per role, only the ports that role serves
# ---------------------------------------------------------------------------

module "metrics_sg" {
  source = "../security-group"

  name        = "${var.name}-metrics"
  description = "loadgate metrics node: Prometheus, Grafana, Pyroscope"
  vpc_id      = module.network.vpc_id
  # The controller queries Prometheus (health, results), Grafana (dashboard,
  # snapshots) and Pyroscope (profiles); nothing else on this node is reachable
  # from outside the VPC.
  ingress_rules = concat(
    flatten([
      for cidr in var.controller_cidr_blocks : [
        for rule in local.controller_ports.metrics : merge(rule, { cidr_ipv4 = cidr })
      ]
    ]),
    local.ssh_rules,
  )
  egress_rules = local.egress_rules
}

# k6 agents push their metrics with Prometheus remote write; the rule lives
# outside the metrics group's module because the agent group is created later.
resource "aws_vpc_security_group_ingress_rule" "metrics_from_agents" {
  security_group_id            = module.metrics_sg.id
  description                  = "Prometheus remote write from the agents"
  ip_protocol                  = "tcp"
  from_port                    = 9090
  to_port                      = 9090
  referenced_security_group_id = module.agent_sg.id
}

# The same for a duet's second Prometheus (slot b, port 9091).
resource "aws_vpc_security_group_ingress_rule" "metrics_b_from_agents" {
  count = var.duet ? 1 : 0

  security_group_id            = module.metrics_sg.id
  description                  = "Duet slot b Prometheus remote write from the agents"
  ip_protocol                  = "tcp"
  from_port                    = 9091
  to_port                      = 9091
  referenced_security_group_id = module.agent_sg.id
}

module "agent_sg" {
  source = "../security-group"

  name        = "${var.name}-agent"
  description = "loadgate load agents"
  vpc_id      = module.network.vpc_id
  ingress_rules = concat(
    flatten([for cidr in var.controller_cidr_blocks : [for rule in local.controller_ports.agent : merge(rule, { cidr_ipv4 = cidr })]]),
    [
      { description = "Agent metrics scraped by the metrics node", from_port = local.agent_metrics_port, to_port = local.agent_metrics_port, referenced_security_group_id = module.metrics_sg.id },
      local.node_exporter_rule,
    ],
    local.ssh_rules,
  )
  egress_rules = local.egress_rules
}

module "proxy_sg" {
  source = "../security-group"

  name        = "${var.name}-proxy"
  description = "loadgate nginx proxy"
  vpc_id      = module.network.vpc_id
  ingress_rules = concat(
    [
      { description = "HTTP from the load agents", from_port = 80, to_port = 80, referenced_security_group_id = module.agent_sg.id },
      local.node_exporter_rule,
    ],
    local.duet_proxy_ingress_rules,
    local.ssh_rules,
  )
  egress_rules = local.egress_rules
}

module "app_sg" {
  source = "../security-group"

  name        = "${var.name}-app"
  description = "loadgate Mattermost app nodes"
  vpc_id      = module.network.vpc_id
  ingress_rules = concat(
    [
      { description = "Mattermost from the proxy", from_port = 8065, to_port = 8065, referenced_security_group_id = module.proxy_sg.id },
      { description = "Mattermost from the load agents", from_port = 8065, to_port = 8065, referenced_security_group_id = module.agent_sg.id },
      { description = "Mattermost metrics and pprof for the metrics node", from_port = 8067, to_port = 8067, referenced_security_group_id = module.metrics_sg.id },
      { description = "Mattermost cluster gossip and streaming between app nodes", from_port = 8074, to_port = 8075, self = true },
      { description = "Mattermost cluster gossip (UDP) between app nodes", ip_protocol = "udp", from_port = 8074, to_port = 8074, self = true },
      local.node_exporter_rule,
    ],
    local.duet_app_ingress_rules,
    local.ssh_rules,
  )
  egress_rules = local.app_egress_rules
}

module "db_sg" {
  source = "../security-group"

  name        = "${var.name}-db"
  description = "loadgate Aurora PostgreSQL"
  vpc_id      = module.network.vpc_id
  ingress_rules = [
    { description = "PostgreSQL from the app nodes", from_port = 5432, to_port = 5432, referenced_security_group_id = module.app_sg.id },
  ]
}

module "opensearch_sg" {
  source = "../security-group"
  count  = var.opensearch_count > 0 ? 1 : 0

  name        = "${var.name}-opensearch"
  description = "loadgate OpenSearch"
  vpc_id      = module.network.vpc_id
  ingress_rules = [
    { description = "HTTPS from the app nodes", from_port = 443, to_port = 443, referenced_security_group_id = module.app_sg.id },
  ]
}

# ---------------------------------------------------------------------------
# Instance roles
# ---------------------------------------------------------------------------

module "app_role" {
  source = "../instance-role"

  name = "${var.name}-app"
  readable_secret_arns = concat(
    [module.db.master_user_secret_arn],
    var.mattermost_license_secret_arn != null ? [var.mattermost_license_secret_arn] : [],
  )
  kms_key_arns = [aws_kms_key.this.arn]
}

module "metrics_role" {
  source = "../instance-role"

  name                 = "${var.name}-metrics"
  writable_secret_arns = [aws_secretsmanager_secret.grafana_token.arn]
  kms_key_arns         = [aws_kms_key.this.arn]
}

module "node_role" {
  source = "../instance-role"

  name = "${var.name}-node"
}

# ---------------------------------------------------------------------------
# Data stores
# ---------------------------------------------------------------------------

module "db" {
  source = "../aurora-postgresql"

  name                         = var.name
  engine_version               = var.db_engine_version
  instance_class               = var.db_instance_class
  instance_count               = var.db_count
  subnet_ids                   = module.network.private_subnet_ids
  security_group_ids           = [module.db_sg.id]
  kms_key_arn                  = aws_kms_key.this.arn
  database_name                = var.db_name
  master_username              = var.db_username
  snapshot_identifier          = var.db_snapshot_identifier
  cluster_parameters           = var.db_cluster_parameters
  performance_insights_enabled = var.db_performance_insights
}

# The bench's own expiry: Aurora, the NAT gateway and OpenSearch deleted by
# schedules at expires_at whatever happens to the workflow (the nodes power
# themselves off, common.sh.tftpl).
module "expiry" {
  source = "../expiry"

  name                    = var.name
  expires_at              = var.expires_at
  partition               = data.aws_partition.current.partition
  account_id              = data.aws_caller_identity.current.account_id
  region                  = local.region
  db_cluster_identifier   = module.db.cluster_identifier
  db_instance_identifiers = module.db.instance_identifiers
  db_secret_arn           = module.db.master_user_secret_arn
  nat_gateway_id          = module.network.nat_gateway_id
  opensearch_domain_name  = var.opensearch_count > 0 ? var.name : null
}

module "opensearch" {
  source = "../opensearch"
  count  = var.opensearch_count > 0 ? 1 : 0

  name               = var.name
  engine_version     = var.opensearch_engine_version
  instance_type      = var.opensearch_instance_type
  instance_count     = var.opensearch_count
  volume_size_gb     = var.opensearch_volume_size_gb
  subnet_ids         = module.network.private_subnet_ids
  security_group_ids = [module.opensearch_sg[0].id]
  kms_key_arn        = aws_kms_key.this.arn
}

# ---------------------------------------------------------------------------
# Nodes
# ---------------------------------------------------------------------------

module "app" {
  source = "../nodes"

  name                 = "${var.name}-app"
  role                 = "app"
  instance_count       = var.app_count
  instance_type        = var.app_instance_type
  ami_id               = local.ami_id
  subnet_ids           = module.network.private_subnet_ids
  private_ips          = local.proxy_enabled ? [] : [local.single_app_ip]
  security_group_ids   = [module.app_sg.id]
  iam_instance_profile = module.app_role.instance_profile_name
  key_name             = var.ssh_key_name
  root_volume_size_gb  = var.app_volume_size_gb
  user_data_templates  = ["${local.templates}/common.sh.tftpl", "${local.templates}/app.sh.tftpl"]
  user_data_vars = merge(local.common_user_data_vars, {
    mattermost_download_url = var.mattermost_download_url
    # Not coalesce(x, ""): it refuses when every argument is null or empty.
    license_secret_arn  = var.mattermost_license_secret_arn != null ? var.mattermost_license_secret_arn : ""
    db_secret_arn       = module.db.master_user_secret_arn
    db_writer_endpoint  = module.db.writer_endpoint
    db_reader_endpoint  = var.db_count > 1 ? module.db.reader_endpoint : ""
    db_name             = var.db_name
    db_dump_url         = var.db_dump_url != null ? var.db_dump_url : ""
    opensearch_endpoint = var.opensearch_count > 0 ? module.opensearch[0].endpoint : ""
    site_url            = local.proxy_url
    config_patch_b64    = base64encode(jsonencode(jsondecode(var.mattermost_config_patch)))
    duet                = tostring(var.duet)
    site_url_b          = local.slot_b_url
  })
}

module "proxy" {
  source = "../nodes"
  count  = local.proxy_instance_count

  name                 = "${var.name}-proxy"
  role                 = "proxy"
  instance_count       = 1
  instance_type        = var.proxy_instance_type
  ami_id               = local.ami_id
  subnet_ids           = [module.network.private_subnet_ids[0]]
  private_ips          = [local.proxy_private_ip]
  security_group_ids   = [module.proxy_sg.id]
  iam_instance_profile = module.node_role.instance_profile_name
  key_name             = var.ssh_key_name
  root_volume_size_gb  = var.proxy_volume_size_gb
  user_data_templates  = ["${local.templates}/common.sh.tftpl", "${local.templates}/proxy.sh.tftpl"]
  user_data_vars = merge(local.common_user_data_vars, {
    app_ips = join(",", module.app.private_ips)
    duet    = tostring(var.duet)
  })
}

module "agent" {
  source = "../nodes"

  name                        = "${var.name}-agent"
  role                        = "agent"
  instance_count              = var.agent_count
  instance_type               = var.agent_instance_type
  ami_id                      = local.ami_id
  subnet_ids                  = module.network.public_subnet_ids
  associate_public_ip_address = true
  security_group_ids          = [module.agent_sg.id]
  iam_instance_profile        = module.node_role.instance_profile_name
  key_name                    = var.ssh_key_name
  root_volume_size_gb         = var.agent_volume_size_gb
  user_data_templates         = ["${local.templates}/common.sh.tftpl", "${local.templates}/agent.sh.tftpl"]
  user_data_vars = merge(local.common_user_data_vars, {
    load_engine           = var.load_engine
    k6_version            = var.k6_version
    loadtest_download_url = var.loadtest_download_url
    proxy_url             = local.proxy_url
    metrics_ip            = local.metrics_private_ip
    agent_api_port        = tostring(local.agent_api_port)
    agent_metrics_port    = tostring(local.agent_metrics_port)
    k6_exporter           = file("${path.module}/files/k6-exporter.py")
  })
}

module "metrics" {
  source = "../nodes"

  name                        = "${var.name}-metrics"
  role                        = "metrics"
  instance_count              = 1
  instance_type               = var.metrics_instance_type
  ami_id                      = local.ami_id
  subnet_ids                  = [module.network.public_subnet_ids[0]]
  private_ips                 = [local.metrics_private_ip]
  associate_public_ip_address = true
  security_group_ids          = [module.metrics_sg.id]
  iam_instance_profile        = module.metrics_role.instance_profile_name
  key_name                    = var.ssh_key_name
  root_volume_size_gb         = var.metrics_volume_size_gb
  user_data_templates         = ["${local.templates}/common.sh.tftpl", "${local.templates}/metrics.sh.tftpl"]
  user_data_vars = merge(local.common_user_data_vars, {
    app_ips            = join(",", module.app.private_ips)
    agent_ips          = join(",", module.agent.private_ips)
    proxy_ip           = local.proxy_enabled ? local.proxy_private_ip : ""
    agent_metrics_port = tostring(local.agent_metrics_port)
    grafana_secret_arn = aws_secretsmanager_secret.grafana_token.arn
    prometheus_image   = var.metrics_images.prometheus
    grafana_image      = var.metrics_images.grafana
    pyroscope_image    = var.metrics_images.pyroscope
    alloy_image        = var.metrics_images.alloy
    dashboard_json     = file("${path.module}/files/bench-overview.json")
    duet               = tostring(var.duet)
  })
}
