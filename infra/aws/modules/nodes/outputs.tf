output "ids" {
  description = "Instance IDs, in index order (for SSM commands)."
  value       = aws_instance.this[*].id
}

output "private_ips" {
  description = "Private addresses, in index order."
  value       = aws_instance.this[*].private_ip
}

output "public_ips" {
  description = "Public addresses, in index order (empty strings when none)."
  value       = [for instance in aws_instance.this : instance.public_ip]
}

output "host_names" {
  description = "Host names the node set itself, in index order (app0, app1, ...)."
  value       = [for index in range(var.instance_count) : "${var.role}${index}"]
}
