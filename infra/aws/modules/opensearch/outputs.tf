output "endpoint" {
  description = "Domain endpoint host name (HTTPS)."
  value       = aws_opensearch_domain.this.endpoint
}

output "arn" {
  description = "ARN of the domain."
  value       = aws_opensearch_domain.this.arn
}
