# Plans and applies the root module for every preset shape against a mocked
# AWS provider (no AWS account, no network): the real provider's schema checks
# every argument, Terraform evaluates every expression, validation and
# precondition. Run by scripts/check-infra.sh with the provider it builds.
#
# Sizes are those of src/aws/presets.ts (perfcomp and the ceiling families
# L/XL/2XL/4XL: app type c7i.<size>, proxy m7i.4xlarge or m6in.8xlarge for 4XL,
# metrics m7i.2xlarge, db db.r7g.<size>).

mock_provider "aws" {
  # Values the gate parses (src/aws/terraform-outputs.ts) must look real.
  mock_resource "aws_instance" {
    defaults = {
      id         = "i-0123456789abcdef0"
      public_ip  = "203.0.113.10"
      private_ip = "10.42.100.20"
    }
  }
  mock_resource "aws_vpc" {
    defaults = {
      id = "vpc-0123456789abcdef0"
    }
  }
  mock_resource "aws_subnet" {
    defaults = {
      id = "subnet-0123456789abcdef0"
    }
  }
  mock_resource "aws_kms_key" {
    defaults = {
      arn = "arn:aws:kms:us-east-1:123456789012:key/0f0e0d0c-0b0a-0908-0706-050403020100"
    }
  }
  mock_resource "aws_secretsmanager_secret" {
    defaults = {
      arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:lg-test/grafana-token-AbCdEf"
    }
  }
  mock_resource "aws_rds_cluster" {
    defaults = {
      endpoint        = "lg-test.cluster-abc.us-east-1.rds.amazonaws.com"
      reader_endpoint = "lg-test.cluster-ro-abc.us-east-1.rds.amazonaws.com"
      port            = 5432
      master_user_secret = [{
        kms_key_id    = "arn:aws:kms:us-east-1:123456789012:key/0f0e0d0c-0b0a-0908-0706-050403020100"
        secret_arn    = "arn:aws:secretsmanager:us-east-1:123456789012:secret:rds!cluster-0123-AbCdEf"
        secret_status = "active"
      }]
    }
  }
  # The expiry schedules' role_arn must be an ARN (the provider validates it).
  mock_resource "aws_iam_role" {
    defaults = {
      arn = "arn:aws:iam::123456789012:role/lg-test-1-expiry"
    }
  }
  mock_resource "aws_opensearch_domain" {
    defaults = {
      endpoint = "vpc-lg-test-abc.us-east-1.es.amazonaws.com"
    }
  }
  mock_data "aws_availability_zones" {
    defaults = {
      names = ["us-east-1a", "us-east-1b", "us-east-1c"]
    }
  }
  mock_data "aws_ami" {
    defaults = {
      id = "ami-0123456789abcdef0"
    }
  }
  mock_data "aws_region" {
    defaults = {
      id   = "us-east-1"
      name = "us-east-1"
    }
  }
  mock_data "aws_partition" {
    defaults = {
      partition = "aws"
    }
  }
  mock_data "aws_caller_identity" {
    defaults = {
      account_id = "123456789012"
    }
  }
  mock_data "aws_iam_policy_document" {
    defaults = {
      json = "{\"Version\":\"2012-10-17\",\"Statement\":[]}"
    }
  }
}

variables {
  bench_name  = "lg-test-1"
  repository  = "acme/chat"
  run_id      = "12345"
  run_attempt = 1
  commit_sha  = "0123456789abcdef0123456789abcdef01234567"
  state_key   = "loadgate/acme/chat/12345/1/terraform.tfstate"
  expires_at  = "2030-01-31T18:00:00Z"
  bench = {
    mattermost_download_url = "https://releases.mattermost.com/10.12.0/mattermost-10.12.0-linux-amd64.tar.gz"
    controller_cidr_blocks  = ["198.51.100.7/32"]
  }
}

# perfcomp, the defaults: no licence, no dump, no snapshot (finding 1: the plan
# failed here, coalesce() refused the null licence and dump URL).
run "perfcomp_plain" {
  command = apply

  assert {
    condition = output.instances == {
      app     = "2 x c7i.2xlarge"
      agent   = "11 x c7i.xlarge"
      proxy   = "1 x c7i.xlarge"
      metrics = "1 x m7i.xlarge"
      db      = "2 x db.r7g.2xlarge"
    }
    error_message = "perfcomp instances: ${jsonencode(output.instances)}"
  }
  assert {
    condition     = length(output.app_instance_ids) == 2 && length(output.agent_instance_ids) == 11 && output.proxy_instance_id != null
    error_message = "perfcomp: 2 app nodes, 11 agents and a proxy"
  }
  assert {
    condition     = output.proxy_url == "http://10.42.100.10"
    error_message = "the proxy sits at .10 of the first private subnet's reserved range, got ${output.proxy_url}"
  }
  assert {
    condition     = output.metrics_private_ip == "10.42.0.10"
    error_message = "the metrics node sits at .10 of the first public subnet's reserved range, got ${output.metrics_private_ip}"
  }
  # The ports a run job admits its runner to: Prometheus, Grafana, Pyroscope on the metrics
  # group, the engine API on the agents' group.
  assert {
    condition     = sort([for r in output.controller_ingress : tostring(r.to_port)]) == tolist(["3000", "4040", "6565", "9090"]) && alltrue([for r in output.controller_ingress : r.ip_protocol == "tcp" && r.from_port == r.to_port])
    error_message = "controller_ingress: ${jsonencode(output.controller_ingress)}"
  }
  # Finding 3: agent_api_port defaulted to 4000 while the default engine, k6, listens on 6565.
  assert {
    condition     = output.load_engine == "k6" && output.agent_api_port == 6565
    error_message = "k6's REST API listens on 6565, got ${output.agent_api_port}"
  }
  assert {
    condition     = output.pyroscope_url == "http://203.0.113.10:4040" && output.prometheus_url == "http://203.0.113.10:9090" && output.grafana_url == "http://203.0.113.10:3000"
    error_message = "metrics URLs: ${output.prometheus_url} ${output.grafana_url} ${output.pyroscope_url}"
  }
  assert {
    condition     = output.opensearch_endpoint == null
    error_message = "perfcomp has no OpenSearch"
  }
}

# load-test-ng's agent API listens on 4000 and serves its own metrics.
run "perfcomp_load_test_ng" {
  command = plan

  variables {
    bench = merge(var.bench, {
      load_engine = "load-test-ng"
    })
  }

  assert {
    condition     = output.agent_api_port == 4000
    error_message = "load-test-ng's agent API listens on 4000, got ${output.agent_api_port}"
  }
}

# L.110: one app node reached directly (no proxy), one database node, a
# snapshot restore (finding 1: every snapshot restore has no dump URL).
run "ceiling_l_110_snapshot" {
  command = apply

  variables {
    bench = merge(var.bench, {
      app_instance_type      = "c7i.large"
      app_count              = 1
      agent_count            = 2
      proxy_instance_type    = "m7i.4xlarge"
      metrics_instance_type  = "m7i.2xlarge"
      db_instance_class      = "db.r7g.large"
      db_count               = 1
      db_snapshot_identifier = "lg-dataset-12m"
    })
  }

  assert {
    condition = output.instances == {
      app     = "1 x c7i.large"
      agent   = "2 x c7i.xlarge"
      metrics = "1 x m7i.2xlarge"
      db      = "1 x db.r7g.large"
    }
    error_message = "L.110 instances: ${jsonencode(output.instances)}"
  }
  assert {
    condition     = output.proxy_instance_id == null && output.proxy_url == "http://10.42.100.11:8065"
    error_message = "a single app node is reached directly at its fixed address, got ${output.proxy_url}"
  }
  assert {
    condition     = length(output.app_instance_ids) == 1
    error_message = "L.110 has one app node"
  }
}

# XL.222 with a licence and a dump URL.
run "ceiling_xl_222_licence_dump" {
  command = apply

  variables {
    bench = merge(var.bench, {
      app_instance_type             = "c7i.xlarge"
      app_count                     = 2
      agent_count                   = 3
      proxy_instance_type           = "m7i.4xlarge"
      metrics_instance_type         = "m7i.2xlarge"
      db_instance_class             = "db.r7g.xlarge"
      db_count                      = 2
      opensearch_count              = 2
      db_name                       = "ltdb"
      db_dump_url                   = "https://lt-public-data.s3.amazonaws.com/12M_610_fixed_psql.sql.gz"
      mattermost_license_secret_arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:loadgate/mattermost-license-AbCdEf"
    })
  }

  assert {
    condition     = output.instances["opensearch"] == "2 x r6g.xlarge.search" && output.opensearch_endpoint == "vpc-lg-test-abc.us-east-1.es.amazonaws.com"
    error_message = "XL.222 has two OpenSearch nodes: ${jsonencode(output.instances)}"
  }
  assert {
    condition     = output.db_name == "ltdb" && output.instances["db"] == "2 x db.r7g.xlarge"
    error_message = "XL.222 database: ${output.db_name}, ${output.instances["db"]}"
  }
}

# 2XL.552 with OpenSearch, a licence, a snapshot and SSH (key and range).
run "ceiling_2xl_552_ssh" {
  command = apply

  variables {
    bench = merge(var.bench, {
      app_instance_type             = "c7i.2xlarge"
      app_count                     = 5
      agent_count                   = 10
      proxy_instance_type           = "m7i.4xlarge"
      metrics_instance_type         = "m7i.2xlarge"
      db_instance_class             = "db.r7g.2xlarge"
      db_count                      = 5
      opensearch_count              = 2
      db_snapshot_identifier        = "arn:aws:rds:us-east-1:123456789012:cluster-snapshot:lg-dataset-12m"
      mattermost_license_secret_arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:loadgate/mattermost-license-AbCdEf"
      ssh_key_name                  = "bench-admin"
      ssh_cidr_blocks               = ["198.51.100.0/24"]
    })
  }

  assert {
    condition     = length(output.app_instance_ids) == 5 && length(output.agent_instance_ids) == 10 && output.instances["db"] == "5 x db.r7g.2xlarge"
    error_message = "2XL.552: ${jsonencode(output.instances)}"
  }
}

# 4XL.662: the largest seed preset, with its m6in.8xlarge proxy.
run "ceiling_4xl_662" {
  command = apply

  variables {
    bench = merge(var.bench, {
      app_instance_type     = "c7i.4xlarge"
      app_count             = 6
      agent_count           = 20
      proxy_instance_type   = "m6in.8xlarge"
      metrics_instance_type = "m7i.2xlarge"
      db_instance_class     = "db.r7g.4xlarge"
      db_count              = 6
      opensearch_count      = 2
    })
  }

  assert {
    condition = output.instances == {
      app        = "6 x c7i.4xlarge"
      agent      = "20 x c7i.xlarge"
      proxy      = "1 x m6in.8xlarge"
      metrics    = "1 x m7i.2xlarge"
      db         = "6 x db.r7g.4xlarge"
      opensearch = "2 x r6g.xlarge.search"
    }
    error_message = "4XL.662 instances: ${jsonencode(output.instances)}"
  }
}

# The bench module's variables refuse what would break the bench before anything
# is planned: a snapshot with a dump, and a controller range open to everyone. Run on
# the module (a test can only expect failures of the module it runs); each expected
# failure must occur.
run "refuses_snapshot_and_dump_and_wide_controller_range" {
  command = plan

  module {
    source = "./modules/bench"
  }

  variables {
    name                    = var.bench_name
    mattermost_download_url = var.bench.mattermost_download_url
    db_snapshot_identifier  = "lg-dataset-12m"
    db_dump_url             = "https://lt-public-data.s3.amazonaws.com/12M_610_fixed_psql.sql.gz"
    controller_cidr_blocks  = ["0.0.0.0/0"]
  }

  expect_failures = [var.db_dump_url, var.controller_cidr_blocks]
}

# A duet: the baseline and candidate at once on the same app nodes (perfcomp with
# an even agent count). Slot a is the sequential bench's entry points; slot b is
# the proxy's :8080 and the second Prometheus, driven by the second half of the agents.
run "perfcomp_duet" {
  command = apply

  variables {
    bench = merge(var.bench, {
      agent_count = 10
      duet        = true
    })
  }

  assert {
    # Compared as JSON, as the gate reads it: a tuple never equals a list literal.
    condition = jsonencode(output.duet_slots) == jsonencode([
      { slot = "a", proxy_url = "http://10.42.100.10", prometheus_url = "http://203.0.113.10:9090", app_port = 8065, metrics_port = 8067, agent_indices = [0, 1, 2, 3, 4] },
      { slot = "b", proxy_url = "http://10.42.100.10:8080", prometheus_url = "http://203.0.113.10:9091", app_port = 8165, metrics_port = 8167, agent_indices = [5, 6, 7, 8, 9] },
    ])
    error_message = "duet_slots: ${jsonencode(output.duet_slots)}"
  }
  assert {
    condition     = output.duet_slots[0].proxy_url == output.proxy_url && output.duet_slots[0].prometheus_url == output.prometheus_url
    error_message = "slot a is reached where a sequential bench is"
  }
  # The controller also reaches slot b's Prometheus.
  assert {
    condition     = sort([for r in output.controller_ingress : tostring(r.to_port)]) == tolist(["3000", "4040", "6565", "9090", "9091"])
    error_message = "controller_ingress: ${jsonencode(output.controller_ingress)}"
  }
}

# A sequential bench has no slots and no port of slot b.
run "sequential_has_no_duet_slots" {
  command = plan

  assert {
    condition     = length(output.duet_slots) == 0
    error_message = "duet_slots of a sequential bench: ${jsonencode(output.duet_slots)}"
  }
}

# A duet on one app node (no proxy): slot b is that node's :8165, as slot a is its :8065.
run "duet_single_app_node" {
  command = apply

  variables {
    bench = merge(var.bench, {
      app_count   = 1
      agent_count = 2
      duet        = true
    })
  }

  assert {
    condition     = [for s in output.duet_slots : s.proxy_url] == ["http://10.42.100.11:8065", "http://10.42.100.11:8165"]
    error_message = "duet_slots without a proxy: ${jsonencode(output.duet_slots)}"
  }
  assert {
    condition     = jsonencode([for s in output.duet_slots : s.agent_indices]) == "[[0],[1]]"
    error_message = "one agent per slot: ${jsonencode(output.duet_slots)}"
  }
}

# Slot b's security-group rules exist only in a duet: agents to the proxy's 8080,
# the proxy and agents to the app nodes' 8165, the metrics node to their 8167,
# gossip on 8174 between them, the controller and the agents' remote write to 9091.
run "duet_security_group_rules" {
  command = apply

  module {
    source = "./modules/bench"
  }

  variables {
    name                    = var.bench_name
    mattermost_download_url = var.bench.mattermost_download_url
    controller_cidr_blocks  = ["198.51.100.7/32"]
    agent_count             = 4
    duet                    = true
  }

  assert {
    condition = alltrue([for key in [
      "tcp:8165-8165:Duet slot b Mattermost from the proxy",
      "tcp:8165-8165:Duet slot b Mattermost from the load agents",
      "tcp:8167-8167:Duet slot b metrics and pprof for the metrics node",
      "tcp:8174-8174:self",
      "udp:8174-8174:self",
    ] : contains(module.app_sg.ingress_rule_keys, key)])
    error_message = "app ingress: ${jsonencode(module.app_sg.ingress_rule_keys)}"
  }
  assert {
    condition     = contains(module.app_sg.egress_rule_keys, "udp:8174-8174:10.42.0.0/16")
    error_message = "app egress: ${jsonencode(module.app_sg.egress_rule_keys)}"
  }
  assert {
    condition     = contains(module.proxy_sg.ingress_rule_keys, "tcp:8080-8080:Duet slot b HTTP from the load agents")
    error_message = "proxy ingress: ${jsonencode(module.proxy_sg.ingress_rule_keys)}"
  }
  assert {
    condition     = contains(module.metrics_sg.ingress_rule_keys, "tcp:9091-9091:198.51.100.7/32") && length(aws_vpc_security_group_ingress_rule.metrics_b_from_agents) == 1
    error_message = "metrics ingress: ${jsonencode(module.metrics_sg.ingress_rule_keys)}"
  }
}

run "sequential_security_group_rules" {
  command = apply

  module {
    source = "./modules/bench"
  }

  variables {
    name                    = var.bench_name
    mattermost_download_url = var.bench.mattermost_download_url
    controller_cidr_blocks  = ["198.51.100.7/32"]
  }

  assert {
    condition = length([
      for key in flatten([
        module.app_sg.ingress_rule_keys, module.app_sg.egress_rule_keys, module.proxy_sg.ingress_rule_keys,
        module.metrics_sg.ingress_rule_keys, module.agent_sg.ingress_rule_keys,
      ]) : key if can(regex("^(tcp|udp):(8080|8165|8167|8174|9091)-", key))
    ]) == 0 && length(aws_vpc_security_group_ingress_rule.metrics_b_from_agents) == 0
    error_message = "a sequential bench opens none of slot b's ports"
  }
  assert {
    condition     = contains(module.app_sg.ingress_rule_keys, "tcp:8074-8075:self") && contains(module.proxy_sg.ingress_rule_keys, "tcp:80-80:HTTP from the load agents")
    error_message = "slot a's rules: ${jsonencode(module.app_sg.ingress_rule_keys)}"
  }
}

# A duet splits the agents in two halves: an odd count, or fewer than two, is refused.
run "duet_refuses_odd_agent_count" {
  command = plan

  module {
    source = "./modules/bench"
  }

  variables {
    name                    = var.bench_name
    mattermost_download_url = var.bench.mattermost_download_url
    agent_count             = 11
    duet                    = true
  }

  expect_failures = [var.duet]
}
