# An OpenSearch domain inside the bench VPC for Mattermost's Elasticsearch
# integration. Access is limited by network (VPC only, 443 from the app security
# group): Mattermost's client does not sign requests with SigV4, so the domain
# policy cannot name an IAM principal.

data "aws_region" "current" {}

data "aws_caller_identity" "current" {}

data "aws_partition" "current" {}

locals {
  zone_count = min(var.instance_count, length(var.subnet_ids), 3)
  domain_arn = "arn:${data.aws_partition.current.partition}:es:${data.aws_region.current.region}:${data.aws_caller_identity.current.account_id}:domain/${var.name}"
}

resource "aws_opensearch_domain" "this" {
  #checkov:skip=CKV_AWS_84:Log publishing needs CloudWatch log groups and a resource policy the bench would have to manage; the domain lives for one gate run.
  #checkov:skip=CKV_AWS_317:Audit logging requires fine-grained access control, which Mattermost's unsigned client cannot use; access is limited to the app security group inside the VPC.
  #checkov:skip=CKV2_AWS_52:Fine-grained access control requires signed or authenticated requests; see CKV_AWS_317.
  #checkov:skip=CKV2_AWS_59:Dedicated master nodes would double the cost of a two-node search tier that lives for one gate run.
  #checkov:skip=CKV_AWS_318:Dedicated master nodes: see CKV2_AWS_59.
  domain_name    = var.name
  engine_version = var.engine_version

  cluster_config {
    instance_type          = var.instance_type
    instance_count         = var.instance_count
    zone_awareness_enabled = local.zone_count > 1

    dynamic "zone_awareness_config" {
      for_each = local.zone_count > 1 ? [1] : []

      content {
        availability_zone_count = local.zone_count
      }
    }
  }

  ebs_options {
    ebs_enabled = true
    volume_type = "gp3"
    volume_size = var.volume_size_gb
  }

  vpc_options {
    subnet_ids         = slice(var.subnet_ids, 0, local.zone_count)
    security_group_ids = var.security_group_ids
  }

  encrypt_at_rest {
    enabled    = true
    kms_key_id = var.kms_key_arn
  }

  node_to_node_encryption {
    enabled = true
  }

  domain_endpoint_options {
    enforce_https       = true
    tls_security_policy = "Policy-Min-TLS-1-2-2019-07"
  }

  access_policies = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Effect    = "Allow"
      Principal = { AWS = "*" }
      Action    = "es:ESHttp*"
      Resource  = "${local.domain_arn}/*"
    }]
  })
}
