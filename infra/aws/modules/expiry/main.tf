# The bench's own expiry for what bills by the hour besides the nodes (which power
# themselves off), independent of GitHub: one-time EventBridge Scheduler
# schedules, created with the bench, delete the database instances, the NAT
# gateway and the OpenSearch domain at expires_at and the Aurora cluster after
# its instances, through universal targets (each API called as the role below).
# Teardown deletes the schedules with the bench; a run job that moves the
# ExpiresAt tag later moves these schedules by the same amount
# (src/bench/aws/expiry-schedules.ts).
#
# Schedule arguments as hashicorp/terraform-provider-aws documents them
# (website/docs/r/scheduler_schedule.html.markdown; internal/service/scheduler/
# schedule.go): at() takes a local time read in schedule_expression_timezone,
# UTC by default; the target ARN arn:aws:scheduler:::aws-sdk:<service>:<apiAction>
# takes the API's own request parameters as JSON input (Scheduler User Guide,
# managing-targets-universal).

locals {
  # at(yyyy-mm-ddThh:mm:ss), UTC.
  at = { for label, delay in local.delays : label => "at(${trimsuffix(timeadd(var.expires_at, delay), "Z")})" }

  # RDS deletes a cluster only once it holds no instance that is not deleting
  # (DeleteDBCluster: InvalidDBClusterStateFault), and Aurora instances take
  # minutes to go: the cluster is deleted half an hour after them, and once more
  # two hours after them in case the first call came too early (an RDS client
  # error is not one the scheduler retries).
  delays = {
    instances     = "0s"
    cluster       = "30m"
    cluster-again = "2h"
  }

  db_arn      = "arn:${var.partition}:rds:${var.region}:${var.account_id}:db"
  cluster_arn = "arn:${var.partition}:rds:${var.region}:${var.account_id}:cluster:${var.db_cluster_identifier}"
  nat_arn     = "arn:${var.partition}:ec2:${var.region}:${var.account_id}:natgateway/${var.nat_gateway_id}"
  domain_arn  = "arn:${var.partition}:es:${var.region}:${var.account_id}:domain/${coalesce(var.opensearch_domain_name, "none")}"

  # The rest, at the expiry: EC2 DeleteNatGateway and OpenSearch DeleteDomain (each
  # service's API Reference), the domain only when the bench has one.
  others = merge(
    {
      nat-gateway = { target = "arn:aws:scheduler:::aws-sdk:ec2:deleteNatGateway", input = { NatGatewayId = var.nat_gateway_id } }
    },
    var.opensearch_domain_name == null ? {} : {
      opensearch-domain = { target = "arn:aws:scheduler:::aws-sdk:opensearch:deleteDomain", input = { DomainName = var.opensearch_domain_name } }
    },
  )
}

# The group carries the bench's tags (schedules take none), so the janitor finds it.
resource "aws_scheduler_schedule_group" "this" {
  name = var.name
}

data "aws_iam_policy_document" "assume" {
  statement {
    actions = ["sts:AssumeRole"]

    principals {
      type        = "Service"
      identifiers = ["scheduler.amazonaws.com"]
    }

    # Only this bench's schedules may assume the role (confused-deputy guard,
    # Scheduler User Guide: setting-up, execution role).
    condition {
      test     = "StringEquals"
      variable = "aws:SourceAccount"
      values   = [var.account_id]
    }

    condition {
      test     = "ArnLike"
      variable = "aws:SourceArn"
      values   = ["arn:${var.partition}:scheduler:${var.region}:${var.account_id}:schedule/${var.name}/*"]
    }
  }
}

resource "aws_iam_role" "this" {
  name               = "${var.name}-expiry"
  description        = "EventBridge Scheduler deletes loadgate bench ${var.name}'s Aurora at its expiry"
  assume_role_policy = data.aws_iam_policy_document.assume.json
}

# What the schedules call, on this bench's database only.
data "aws_iam_policy_document" "delete" {
  statement {
    sid       = "DeleteBenchDbInstances"
    actions   = ["rds:DeleteDBInstance"]
    resources = [for id in var.db_instance_identifiers : "${local.db_arn}:${id}"]
  }

  statement {
    sid       = "DeleteBenchDbCluster"
    actions   = ["rds:DeleteDBCluster"]
    resources = [local.cluster_arn]
  }

  statement {
    sid       = "DeleteBenchNatGateway"
    actions   = ["ec2:DeleteNatGateway"]
    resources = [local.nat_arn]
  }

  dynamic "statement" {
    for_each = var.opensearch_domain_name == null ? [] : [local.domain_arn]

    content {
      sid       = "DeleteBenchSearchDomain"
      actions   = ["es:DeleteDomain"]
      resources = [statement.value]
    }
  }

  # RDS deletes the cluster's managed master-user secret as the caller.
  statement {
    sid       = "DeleteBenchDbSecret"
    actions   = ["secretsmanager:DeleteSecret"]
    resources = [var.db_secret_arn]
  }
}

resource "aws_iam_role_policy" "delete" {
  name   = "bench-expiry"
  role   = aws_iam_role.this.id
  policy = data.aws_iam_policy_document.delete.json
}

resource "aws_scheduler_schedule" "db_instance" {
  #checkov:skip=CKV_AWS_297:The schedule holds only database identifiers; a customer key would be one more thing whose policy or deletion could stop the bench expiring.
  count = length(var.db_instance_identifiers)

  name                = "db-instance-${count.index}"
  group_name          = aws_scheduler_schedule_group.this.name
  description         = "Deletes ${var.db_instance_identifiers[count.index]} at the bench's expiry"
  schedule_expression = local.at.instances
  # at() reads a local time: UTC, as expires_at is.
  schedule_expression_timezone = "UTC"
  state                        = "ENABLED"
  # Kept after it fires, so teardown and the run jobs find it where Terraform put it.
  action_after_completion = "NONE"

  flexible_time_window {
    mode = "OFF"
  }

  target {
    arn      = "arn:aws:scheduler:::aws-sdk:rds:deleteDBInstance"
    role_arn = aws_iam_role.this.arn
    # RDS API Reference, DeleteDBInstance.
    input = jsonencode({
      DBInstanceIdentifier   = var.db_instance_identifiers[count.index]
      SkipFinalSnapshot      = true
      DeleteAutomatedBackups = true
    })

    retry_policy {
      maximum_event_age_in_seconds = 86400
      maximum_retry_attempts       = 185
    }
  }

  # The role's policy must exist before the schedule can first fire.
  depends_on = [aws_iam_role_policy.delete]
}

resource "aws_scheduler_schedule" "db_cluster" {
  #checkov:skip=CKV_AWS_297:The schedule holds only database identifiers; a customer key would be one more thing whose policy or deletion could stop the bench expiring.
  for_each = toset(["cluster", "cluster-again"])

  name                         = "db-${each.key}"
  group_name                   = aws_scheduler_schedule_group.this.name
  description                  = "Deletes ${var.db_cluster_identifier} after its instances"
  schedule_expression          = local.at[each.key]
  schedule_expression_timezone = "UTC"
  state                        = "ENABLED"
  action_after_completion      = "NONE"

  flexible_time_window {
    mode = "OFF"
  }

  target {
    arn      = "arn:aws:scheduler:::aws-sdk:rds:deleteDBCluster"
    role_arn = aws_iam_role.this.arn
    # RDS API Reference, DeleteDBCluster: no final snapshot of a disposable bench.
    input = jsonencode({
      DBClusterIdentifier = var.db_cluster_identifier
      SkipFinalSnapshot   = true
    })

    retry_policy {
      maximum_event_age_in_seconds = 86400
      maximum_retry_attempts       = 185
    }
  }

  depends_on = [aws_iam_role_policy.delete]
}

resource "aws_scheduler_schedule" "other" {
  #checkov:skip=CKV_AWS_297:The schedule holds only resource identifiers; a customer key would be one more thing whose policy or deletion could stop the bench expiring.
  for_each = local.others

  name                         = each.key
  group_name                   = aws_scheduler_schedule_group.this.name
  description                  = "Deletes the bench's ${each.key} at its expiry"
  schedule_expression          = local.at.instances
  schedule_expression_timezone = "UTC"
  state                        = "ENABLED"
  action_after_completion      = "NONE"

  flexible_time_window {
    mode = "OFF"
  }

  target {
    arn      = each.value.target
    role_arn = aws_iam_role.this.arn
    input    = jsonencode(each.value.input)

    retry_policy {
      maximum_event_age_in_seconds = 86400
      maximum_retry_attempts       = 185
    }
  }

  depends_on = [aws_iam_role_policy.delete]
}
