# The EC2 instances of one bench role. Each instance gets its own user data:
# the role's templates rendered with the shared variables plus its index and
# host name (app0, app1, ...), gzip-compressed so the larger scripts stay under
# EC2's 16 KB user-data limit (cloud-init decompresses gzip user data).

locals {
  user_data = [
    for index in range(var.instance_count) : join("\n", [
      for template in var.user_data_templates : templatefile(template, merge(var.user_data_vars, {
        node_index = tostring(index)
        node_name  = "${var.role}${index}"
      }))
    ])
  ]
}

resource "aws_instance" "this" {
  count = var.instance_count

  ami                         = var.ami_id
  instance_type               = var.instance_type
  subnet_id                   = var.subnet_ids[count.index % length(var.subnet_ids)]
  private_ip                  = length(var.private_ips) > 0 ? var.private_ips[count.index] : null
  vpc_security_group_ids      = var.security_group_ids
  associate_public_ip_address = var.associate_public_ip_address
  iam_instance_profile        = var.iam_instance_profile
  key_name                    = var.key_name
  ebs_optimized               = true
  monitoring                  = true

  # The node's own expiry (common.sh.tftpl) powers it off; EC2 then terminates
  # it, so a bench nobody tears down stops billing for its instances.
  instance_initiated_shutdown_behavior = "terminate"

  user_data_base64            = base64gzip(local.user_data[count.index])
  user_data_replace_on_change = true

  # IMDSv2 only; one hop so containers on the node cannot reach the credentials.
  # Tags in the metadata: the node reads its ExpiresAt tag, which run jobs move
  # later, without any IAM permission.
  metadata_options {
    http_endpoint               = "enabled"
    http_tokens                 = "required"
    http_put_response_hop_limit = 1
    instance_metadata_tags      = "enabled"
  }

  root_block_device {
    volume_type           = "gp3"
    volume_size           = var.root_volume_size_gb
    encrypted             = true
    delete_on_termination = true
  }

  tags = {
    Name = "${var.name}-${count.index}"
    Role = var.role
  }

  lifecycle {
    precondition {
      condition     = length(var.private_ips) == 0 || length(var.private_ips) == var.instance_count
      error_message = "private_ips must be empty or have one address per instance."
    }
  }
}
