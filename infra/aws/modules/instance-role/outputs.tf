output "role_arn" {
  description = "ARN of the instance role."
  value       = aws_iam_role.this.arn
}

output "instance_profile_name" {
  description = "Name of the instance profile to attach to the instances."
  value       = aws_iam_instance_profile.this.name
}
