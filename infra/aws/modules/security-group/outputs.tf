output "id" {
  description = "ID of the security group."
  value       = aws_security_group.this.id
}

output "arn" {
  description = "ARN of the security group."
  value       = aws_security_group.this.arn
}

output "ingress_rule_keys" {
  description = "Keys of the ingress rules created, protocol:from-to:source (a CIDR, self, or the description of a rule from another group); terraform test reads them."
  value       = keys(aws_vpc_security_group_ingress_rule.this)
}

output "egress_rule_keys" {
  description = "Keys of the egress rules created, protocol:from-to:CIDR; terraform test reads them."
  value       = keys(aws_vpc_security_group_egress_rule.this)
}
