# Aurora PostgreSQL for one bench: a cluster with its own parameter group, one
# writer and N-1 readers. The bench is disposable, so no final snapshot and no
# deletion protection; storage is still encrypted, with the bench's own key.

locals {
  family = "aurora-postgresql${split(".", var.engine_version)[0]}"
}

resource "aws_db_subnet_group" "this" {
  name       = var.name
  subnet_ids = var.subnet_ids

  tags = {
    Name = var.name
  }
}

resource "aws_rds_cluster_parameter_group" "this" {
  name        = "${var.name}-cluster"
  family      = local.family
  description = "loadgate bench ${var.name}"

  dynamic "parameter" {
    for_each = var.cluster_parameters

    content {
      name         = parameter.value.name
      value        = parameter.value.value
      apply_method = parameter.value.apply_method
    }
  }
}

# Aurora exports the PostgreSQL log (errors, slow statements with the default
# parameters) to this group. Terraform creates it first, so RDS does not create
# an unmanaged one that would outlive the bench with no retention.
resource "aws_cloudwatch_log_group" "postgresql" {
  #checkov:skip=CKV_AWS_338:A bench's database log is only read while investigating that gate run; a year of retention would keep logs of disposable benches for nothing.
  name              = "/aws/rds/cluster/${var.name}/postgresql"
  retention_in_days = var.log_retention_days
  kms_key_id        = var.kms_key_arn
}

resource "aws_rds_cluster" "this" {
  #checkov:skip=CKV_AWS_139:A bench cluster lives for one gate run and must be destroyable by terraform destroy and the janitor.
  #checkov:skip=CKV2_AWS_27:Query logging would write every statement of the load test to CloudWatch and change the performance being measured.
  #checkov:skip=CKV2_AWS_8:Backups of a disposable bench serve no purpose; the data is a restored snapshot or a public dump.
  cluster_identifier = var.name
  engine             = "aurora-postgresql"
  engine_mode        = "provisioned"
  engine_version     = var.engine_version

  # A restored snapshot brings its own database and master user.
  snapshot_identifier = var.snapshot_identifier
  database_name       = var.snapshot_identifier == null ? var.database_name : null
  master_username     = var.snapshot_identifier == null ? var.master_username : null

  # RDS generates the password and keeps it in Secrets Manager: it is never in
  # Terraform state, variables or user data.
  manage_master_user_password   = true
  master_user_secret_kms_key_id = var.kms_key_arn

  db_subnet_group_name            = aws_db_subnet_group.this.name
  vpc_security_group_ids          = var.security_group_ids
  db_cluster_parameter_group_name = aws_rds_cluster_parameter_group.this.name

  storage_encrypted = true
  kms_key_id        = var.kms_key_arn

  skip_final_snapshot     = true
  deletion_protection     = false
  backup_retention_period = 1
  copy_tags_to_snapshot   = true
  apply_immediately       = true

  enabled_cloudwatch_logs_exports = ["postgresql"]
  depends_on                      = [aws_cloudwatch_log_group.postgresql]
  # Mattermost signs in with the password; IAM authentication is available for people.
  iam_database_authentication_enabled = true
}

resource "aws_rds_cluster_instance" "this" {
  #checkov:skip=CKV_AWS_118:Enhanced monitoring is not needed: the bench's own Prometheus and Performance Insights cover the database.
  #checkov:skip=CKV_AWS_226:Minor upgrades are off on purpose: baseline and candidate must run against the same database version.
  count = var.instance_count

  identifier         = "${var.name}-${count.index}"
  cluster_identifier = aws_rds_cluster.this.id
  instance_class     = var.instance_class
  engine             = aws_rds_cluster.this.engine
  engine_version     = aws_rds_cluster.this.engine_version

  db_subnet_group_name       = aws_db_subnet_group.this.name
  publicly_accessible        = false
  auto_minor_version_upgrade = false
  # Instance 0 is preferred as the writer on failover.
  promotion_tier    = count.index
  apply_immediately = true

  performance_insights_enabled    = var.performance_insights_enabled
  performance_insights_kms_key_id = var.performance_insights_enabled ? var.kms_key_arn : null

  tags = {
    Name = "${var.name}-${count.index}"
  }
}
