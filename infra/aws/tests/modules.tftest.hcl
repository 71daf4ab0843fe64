# The small modules on their own, mocked provider: what the root module's
# outputs cannot show (Aurora's parameter group and instances, the security
# group's rule keys).

mock_provider "aws" {
  mock_resource "aws_rds_cluster" {
    defaults = {
      master_user_secret = [{
        kms_key_id    = "arn:aws:kms:us-east-1:123456789012:key/0f0e0d0c-0b0a-0908-0706-050403020100"
        secret_arn    = "arn:aws:secretsmanager:us-east-1:123456789012:secret:rds!cluster-0123-AbCdEf"
        secret_status = "active"
      }]
    }
  }
}

# The two parameters the seed benches changed, and one writer plus readers of
# the chosen class, promotion tier in index order.
run "aurora_parameters_and_instances" {
  command = apply

  module {
    source = "./modules/aurora-postgresql"
  }

  variables {
    name               = "lg-test-1"
    engine_version     = "16.8"
    instance_class     = "db.r7g.4xlarge"
    instance_count     = 3
    subnet_ids         = ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"]
    security_group_ids = ["sg-0123456789abcdef0"]
    kms_key_arn        = "arn:aws:kms:us-east-1:123456789012:key/0f0e0d0c-0b0a-0908-0706-050403020100"
    cluster_parameters = [
      { name = "random_page_cost", value = "1.1" },
      { name = "work_mem", value = "32768", apply_method = "immediate" },
    ]
  }

  assert {
    condition     = aws_rds_cluster_parameter_group.this.family == "aurora-postgresql16"
    error_message = "the parameter group family follows the engine's major version"
  }
  assert {
    condition = { for p in aws_rds_cluster_parameter_group.this.parameter : p.name => "${p.value}/${p.apply_method}" } == {
      random_page_cost = "1.1/immediate"
      work_mem         = "32768/immediate"
    }
    error_message = "parameters: ${jsonencode(aws_rds_cluster_parameter_group.this.parameter)}"
  }
  assert {
    condition     = length(aws_rds_cluster_instance.this) == 3 && alltrue([for i in aws_rds_cluster_instance.this : i.instance_class == "db.r7g.4xlarge"])
    error_message = "three instances of db.r7g.4xlarge"
  }
  assert {
    condition     = [for i in aws_rds_cluster_instance.this : i.promotion_tier] == [0, 1, 2]
    error_message = "instance 0 is preferred as the writer"
  }
  assert {
    condition     = aws_rds_cluster.this.database_name == "mattermost" && aws_rds_cluster.this.manage_master_user_password == true && aws_rds_cluster.this.db_cluster_parameter_group_name == aws_rds_cluster_parameter_group.this.name
    error_message = "a new cluster gets the database, an RDS-managed password and the bench's parameter group"
  }
}

# Rules are keyed by what they allow (finding: keyed by list index, removing one
# CIDR replaced every later rule).
run "security_group_rule_keys" {
  command = apply

  module {
    source = "./modules/security-group"
  }

  variables {
    name        = "lg-test-1-metrics"
    description = "test"
    vpc_id      = "vpc-0123456789abcdef0"
    ingress_rules = [
      { description = "Prometheus", from_port = 9090, to_port = 9090, cidr_ipv4 = "198.51.100.7/32" },
      { description = "Prometheus", from_port = 9090, to_port = 9090, cidr_ipv4 = "203.0.113.0/24" },
      { description = "gossip", ip_protocol = "udp", from_port = 8074, to_port = 8074, self = true },
      { description = "node_exporter from metrics", from_port = 9100, to_port = 9100, referenced_security_group_id = "sg-0123456789abcdef1" },
    ]
    egress_rules = [
      { description = "HTTPS", from_port = 443, to_port = 443, cidr_ipv4 = "0.0.0.0/0" },
    ]
  }

  assert {
    condition = sort(keys(aws_vpc_security_group_ingress_rule.this)) == sort([
      "tcp:9090-9090:198.51.100.7/32", "tcp:9090-9090:203.0.113.0/24", "udp:8074-8074:self", "tcp:9100-9100:node_exporter from metrics",
    ])
    error_message = "ingress keys: ${jsonencode(keys(aws_vpc_security_group_ingress_rule.this))}"
  }
  assert {
    condition     = keys(aws_vpc_security_group_egress_rule.this) == ["tcp:443-443:0.0.0.0/0"]
    error_message = "egress keys: ${jsonencode(keys(aws_vpc_security_group_egress_rule.this))}"
  }
}
