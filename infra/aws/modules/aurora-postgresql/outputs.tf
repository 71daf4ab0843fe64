# The endpoints are published only once the instances exist, so nodes that wait
# on them start when the database can answer.

output "cluster_identifier" {
  description = "Identifier of the cluster."
  value       = aws_rds_cluster.this.id
}

output "writer_endpoint" {
  description = "Writer endpoint host name."
  value       = aws_rds_cluster.this.endpoint
  depends_on  = [aws_rds_cluster_instance.this]
}

output "reader_endpoint" {
  description = "Reader endpoint host name (load-balanced over the readers)."
  value       = aws_rds_cluster.this.reader_endpoint
  depends_on  = [aws_rds_cluster_instance.this]
}

output "port" {
  description = "PostgreSQL port."
  value       = aws_rds_cluster.this.port
}

output "master_user_secret_arn" {
  description = "Secrets Manager secret RDS keeps the master user name and password in."
  value       = aws_rds_cluster.this.master_user_secret[0].secret_arn
}

output "instance_identifiers" {
  description = "Identifiers of the instances."
  value       = aws_rds_cluster_instance.this[*].identifier
}

output "log_group_name" {
  description = "CloudWatch log group of the exported PostgreSQL log."
  value       = aws_cloudwatch_log_group.postgresql.name
}
