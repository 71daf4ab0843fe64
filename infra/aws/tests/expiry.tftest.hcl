# The bench's own expiry, mocked provider: the nodes terminate when they power
# themselves off and read their ExpiresAt tag from the instance metadata, and
# the Aurora schedules fire at the bench's expiry (the instances) and after it
# (the cluster), as a least-privilege role scoped to this bench's database.

mock_provider "aws" {
  mock_resource "aws_instance" {
    defaults = {
      id         = "i-0123456789abcdef0"
      public_ip  = "203.0.113.10"
      private_ip = "10.42.100.20"
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
      master_user_secret = [{
        kms_key_id    = "arn:aws:kms:us-east-1:123456789012:key/0f0e0d0c-0b0a-0908-0706-050403020100"
        secret_arn    = "arn:aws:secretsmanager:us-east-1:123456789012:secret:rds!cluster-0123-AbCdEf"
        secret_status = "active"
      }]
    }
  }
  mock_resource "aws_iam_role" {
    defaults = {
      arn = "arn:aws:iam::123456789012:role/lg-test-1-expiry"
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
      region = "us-east-1"
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

# The whole bench: its expiry reaches the schedules, two database instances
# deleted at it, the cluster half an hour and two hours later.
run "bench_schedules_its_database_deletion_at_its_expiry" {
  command = apply

  module {
    source = "./modules/bench"
  }

  variables {
    name                    = "lg-test-1"
    expires_at              = "2030-01-31T18:00:00Z"
    mattermost_download_url = "https://releases.mattermost.com/10.12.0/mattermost-10.12.0-linux-amd64.tar.gz"
    db_count                = 2
  }

  assert {
    condition = module.expiry.schedules == {
      "db-instance-0"    = "at(2030-01-31T18:00:00)"
      "db-instance-1"    = "at(2030-01-31T18:00:00)"
      "db-cluster"       = "at(2030-01-31T18:30:00)"
      "db-cluster-again" = "at(2030-01-31T20:00:00)"
      "nat-gateway"      = "at(2030-01-31T18:00:00)"
    }
    error_message = "schedules: ${jsonencode(module.expiry.schedules)}"
  }
  assert {
    condition     = module.expiry.schedule_group == "lg-test-1"
    error_message = "the schedule group is named after the bench, got ${module.expiry.schedule_group}"
  }
}

# The schedules themselves: what they call, with what, as whom.
run "schedules_delete_the_instances_then_the_cluster" {
  command = apply

  module {
    source = "./modules/expiry"
  }

  variables {
    name                    = "lg-test-1"
    expires_at              = "2030-12-31T23:45:00Z"
    partition               = "aws"
    account_id              = "123456789012"
    region                  = "eu-west-1"
    db_cluster_identifier   = "lg-test-1"
    db_instance_identifiers = ["lg-test-1-0", "lg-test-1-1", "lg-test-1-2"]
    db_secret_arn           = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:rds!cluster-0123-AbCdEf"
    nat_gateway_id          = "nat-0123456789abcdef0"
    opensearch_domain_name  = "lg-test-1"
  }

  # at() across midnight and the year's end, in UTC.
  assert {
    condition     = [for s in aws_scheduler_schedule.db_instance : s.schedule_expression] == ["at(2030-12-31T23:45:00)", "at(2030-12-31T23:45:00)", "at(2030-12-31T23:45:00)"]
    error_message = "the instances are deleted at the expiry"
  }
  assert {
    condition     = aws_scheduler_schedule.db_cluster["cluster"].schedule_expression == "at(2031-01-01T00:15:00)" && aws_scheduler_schedule.db_cluster["cluster-again"].schedule_expression == "at(2031-01-01T01:45:00)"
    error_message = "the cluster is deleted 30 minutes and 2 hours after its instances"
  }
  assert {
    condition = alltrue([for s in concat(aws_scheduler_schedule.db_instance, values(aws_scheduler_schedule.db_cluster), values(aws_scheduler_schedule.other)) :
      s.schedule_expression_timezone == "UTC" && s.flexible_time_window[0].mode == "OFF" && s.group_name == "lg-test-1" && s.state == "ENABLED"
      && s.target[0].role_arn == aws_iam_role.this.arn && s.target[0].retry_policy[0].maximum_retry_attempts == 185
    ])
    error_message = "every schedule fires on time, in UTC, in the bench's group, as the bench's role"
  }
  assert {
    condition = [for s in aws_scheduler_schedule.db_instance : [s.target[0].arn, jsondecode(s.target[0].input)]] == [for id in ["lg-test-1-0", "lg-test-1-1", "lg-test-1-2"] :
    ["arn:aws:scheduler:::aws-sdk:rds:deleteDBInstance", { DBInstanceIdentifier = id, SkipFinalSnapshot = true, DeleteAutomatedBackups = true }]]
    error_message = "each instance schedule calls RDS DeleteDBInstance on its own instance"
  }
  assert {
    condition = alltrue([for s in values(aws_scheduler_schedule.db_cluster) :
    s.target[0].arn == "arn:aws:scheduler:::aws-sdk:rds:deleteDBCluster" && jsondecode(s.target[0].input) == { DBClusterIdentifier = "lg-test-1", SkipFinalSnapshot = true }])
    error_message = "the cluster schedules call RDS DeleteDBCluster without a final snapshot"
  }
  assert {
    condition = { for k, s in aws_scheduler_schedule.other : k => [s.schedule_expression, s.target[0].arn, jsondecode(s.target[0].input)] } == {
      nat-gateway       = ["at(2030-12-31T23:45:00)", "arn:aws:scheduler:::aws-sdk:ec2:deleteNatGateway", { NatGatewayId = "nat-0123456789abcdef0" }]
      opensearch-domain = ["at(2030-12-31T23:45:00)", "arn:aws:scheduler:::aws-sdk:opensearch:deleteDomain", { DomainName = "lg-test-1" }]
    }
    error_message = "the NAT gateway and the search domain are deleted at the expiry"
  }
  # Least privilege: only this bench's schedules assume the role, and it deletes only this bench's database.
  assert {
    condition = one(data.aws_iam_policy_document.assume.statement[0].principals).identifiers == toset(["scheduler.amazonaws.com"]) && toset([for c in data.aws_iam_policy_document.assume.statement[0].condition : "${c.variable}=${join(",", c.values)}"]) == toset([
      "aws:SourceAccount=123456789012",
      "aws:SourceArn=arn:aws:scheduler:eu-west-1:123456789012:schedule/lg-test-1/*",
    ])
    error_message = "the role trusts only the scheduler, for this bench's schedule group"
  }
  assert {
    condition = { for s in data.aws_iam_policy_document.delete.statement : join(",", s.actions) => s.resources } == {
      "rds:DeleteDBInstance"        = toset(["arn:aws:rds:eu-west-1:123456789012:db:lg-test-1-0", "arn:aws:rds:eu-west-1:123456789012:db:lg-test-1-1", "arn:aws:rds:eu-west-1:123456789012:db:lg-test-1-2"])
      "rds:DeleteDBCluster"         = toset(["arn:aws:rds:eu-west-1:123456789012:cluster:lg-test-1"])
      "secretsmanager:DeleteSecret" = toset(["arn:aws:secretsmanager:eu-west-1:123456789012:secret:rds!cluster-0123-AbCdEf"])
      "ec2:DeleteNatGateway"        = toset(["arn:aws:ec2:eu-west-1:123456789012:natgateway/nat-0123456789abcdef0"])
      "es:DeleteDomain"             = toset(["arn:aws:es:eu-west-1:123456789012:domain/lg-test-1"])
    }
    error_message = "the role may delete this bench's database instances, cluster and its secret, NAT gateway and search domain, nothing else"
  }
  assert {
    condition     = aws_iam_role.this.name == "lg-test-1-expiry" && aws_iam_role_policy.delete.role == aws_iam_role.this.id
    error_message = "the role is named lg-* (the workflow role may pass only lg-* roles)"
  }
}

run "refuses_an_expiry_that_is_not_a_utc_time" {
  command = plan

  module {
    source = "./modules/expiry"
  }

  variables {
    name                    = "lg-test-1"
    expires_at              = "2030-01-31 18:00"
    partition               = "aws"
    account_id              = "123456789012"
    region                  = "us-east-1"
    db_cluster_identifier   = "lg-test-1"
    db_instance_identifiers = ["lg-test-1-0"]
    db_secret_arn           = "arn:aws:secretsmanager:us-east-1:123456789012:secret:rds!cluster-0123-AbCdEf"
    nat_gateway_id          = "nat-0123456789abcdef0"
  }

  expect_failures = [var.expires_at]
}

# Every node terminates when it powers itself off, and reads its tags (ExpiresAt)
# from the instance metadata, IMDSv2 only.
run "nodes_terminate_on_shutdown_and_read_their_tags" {
  command = apply

  module {
    source = "./modules/nodes"
  }

  variables {
    name                 = "lg-test-1-agent"
    role                 = "agent"
    instance_count       = 3
    instance_type        = "c7i.xlarge"
    ami_id               = "ami-0123456789abcdef0"
    subnet_ids           = ["subnet-0123456789abcdef0"]
    security_group_ids   = ["sg-0123456789abcdef0"]
    iam_instance_profile = "lg-test-1-node"
    user_data_templates  = ["./modules/bench/templates/common.sh.tftpl"]
    user_data_vars       = { bench_name = "lg-test-1", region = "us-east-1", expires_at = "2030-01-31T18:00:00Z" }
  }

  assert {
    condition     = length(aws_instance.this) == 3 && alltrue([for i in aws_instance.this : i.instance_initiated_shutdown_behavior == "terminate"])
    error_message = "a node that powers itself off is terminated, not kept stopped"
  }
  assert {
    condition     = alltrue([for i in aws_instance.this : i.metadata_options[0].instance_metadata_tags == "enabled" && i.metadata_options[0].http_tokens == "required"])
    error_message = "the nodes read their ExpiresAt tag from the instance metadata (IMDSv2)"
  }
}
