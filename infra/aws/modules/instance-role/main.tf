# An instance role per bench role: Session Manager access (the gate runs commands
# on the nodes through SSM, so no SSH is needed) plus exactly the secrets that
# role reads or writes.

data "aws_iam_policy_document" "assume" {
  statement {
    actions = ["sts:AssumeRole"]

    principals {
      type        = "Service"
      identifiers = ["ec2.amazonaws.com"]
    }
  }
}

resource "aws_iam_role" "this" {
  name                 = var.name
  assume_role_policy   = data.aws_iam_policy_document.assume.json
  max_session_duration = 3600
}

resource "aws_iam_role_policy_attachment" "ssm" {
  role       = aws_iam_role.this.name
  policy_arn = "arn:${data.aws_partition.current.partition}:iam::aws:policy/AmazonSSMManagedInstanceCore"
}

data "aws_partition" "current" {}

data "aws_iam_policy_document" "secrets" {
  count = length(var.readable_secret_arns) + length(var.writable_secret_arns) > 0 ? 1 : 0

  dynamic "statement" {
    for_each = length(var.readable_secret_arns) > 0 ? [1] : []

    content {
      sid       = "ReadBenchSecrets"
      actions   = ["secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"]
      resources = var.readable_secret_arns
    }
  }

  dynamic "statement" {
    for_each = length(var.writable_secret_arns) > 0 ? [1] : []

    content {
      sid       = "WriteBenchSecrets"
      actions   = ["secretsmanager:PutSecretValue", "secretsmanager:DescribeSecret"]
      resources = var.writable_secret_arns
    }
  }

  dynamic "statement" {
    for_each = length(var.kms_key_arns) > 0 ? [1] : []

    content {
      sid       = "UseBenchKey"
      actions   = ["kms:Decrypt", "kms:GenerateDataKey"]
      resources = var.kms_key_arns
    }
  }
}

resource "aws_iam_role_policy" "secrets" {
  count = length(data.aws_iam_policy_document.secrets)

  name   = "bench-secrets"
  role   = aws_iam_role.this.id
  policy = data.aws_iam_policy_document.secrets[0].json
}

resource "aws_iam_instance_profile" "this" {
  name = var.name
  role = aws_iam_role.this.name
}
