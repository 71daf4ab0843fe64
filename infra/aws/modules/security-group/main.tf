# One security group for one bench role, with one rule resource per rule so a
# change to a rule does not recreate the group (aws_vpc_security_group_*_rule).

resource "aws_security_group" "this" {
  #checkov:skip=CKV2_AWS_5:The group is attached by the caller (modules/bench passes its id to instances, Aurora and OpenSearch); checkov cannot follow the id through module outputs.
  name        = var.name
  description = var.description
  vpc_id      = var.vpc_id

  tags = {
    Name = var.name
  }
}

# Rules are keyed by what they allow, not by list position: removing a CIDR
# from a list then deletes that rule only instead of replacing every later one.
# A referenced group's ID is unknown until it exists, so such rules are keyed
# by their description (unique per group, checked in variables.tf).
locals {
  ingress_rules = {
    for rule in var.ingress_rules :
    "${rule.ip_protocol}:${rule.from_port}-${rule.to_port}:${rule.cidr_ipv4 != null ? rule.cidr_ipv4 : rule.self ? "self" : rule.description}" => rule
  }
  egress_rules = { for rule in var.egress_rules : "${rule.ip_protocol}:${rule.from_port}-${rule.to_port}:${rule.cidr_ipv4}" => rule }
}

resource "aws_vpc_security_group_ingress_rule" "this" {
  for_each = local.ingress_rules

  security_group_id            = aws_security_group.this.id
  description                  = each.value.description
  ip_protocol                  = each.value.ip_protocol
  from_port                    = each.value.from_port
  to_port                      = each.value.to_port
  cidr_ipv4                    = each.value.cidr_ipv4
  referenced_security_group_id = each.value.self ? aws_security_group.this.id : each.value.referenced_security_group_id
}

resource "aws_vpc_security_group_egress_rule" "this" {
  for_each = local.egress_rules

  security_group_id = aws_security_group.this.id
  description       = each.value.description
  ip_protocol       = each.value.ip_protocol
  from_port         = each.value.from_port
  to_port           = each.value.to_port
  cidr_ipv4         = each.value.cidr_ipv4
}
