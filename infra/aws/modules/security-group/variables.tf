variable "name" {
  description = "Name of the security group (bench name and role, e.g. lg-123-1-app)."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{2,62}$", var.name))
    error_message = "name must be 3-63 lower-case letters, digits or dashes, starting with a letter."
  }
}

variable "description" {
  description = "What the group protects; shown in the AWS console."
  type        = string
}

variable "vpc_id" {
  description = "VPC the group belongs to."
  type        = string
}

variable "ingress_rules" {
  description = <<-EOT
    Inbound rules. Each names one source: cidr_ipv4, referenced_security_group_id,
    or self = true (members of this group). ip_protocol is tcp unless given
    (Mattermost's cluster gossip also needs udp).
  EOT
  type = list(object({
    description                  = string
    ip_protocol                  = optional(string, "tcp")
    from_port                    = number
    to_port                      = number
    cidr_ipv4                    = optional(string)
    referenced_security_group_id = optional(string)
    self                         = optional(bool, false)
  }))
  default = []

  validation {
    condition = alltrue([
      for r in var.ingress_rules :
      (r.cidr_ipv4 != null ? 1 : 0) + (r.referenced_security_group_id != null ? 1 : 0) + (r.self ? 1 : 0) == 1
    ])
    error_message = "Each ingress rule needs exactly one source: cidr_ipv4, referenced_security_group_id or self."
  }

  validation {
    condition = alltrue([
      for r in var.ingress_rules : r.from_port >= 0 && r.to_port <= 65535 && r.from_port <= r.to_port
    ])
    error_message = "Ingress ports must satisfy 0 <= from_port <= to_port <= 65535."
  }

  validation {
    condition     = alltrue([for r in var.ingress_rules : contains(["tcp", "udp"], r.ip_protocol)])
    error_message = "Ingress ip_protocol must be tcp or udp; the bench opens no other protocol."
  }

  # modules/security-group/main.tf keys rules by these; a duplicate would collide.
  validation {
    condition = length(distinct([
      for r in var.ingress_rules : "${r.ip_protocol}:${r.from_port}-${r.to_port}:${r.cidr_ipv4 != null ? r.cidr_ipv4 : r.self ? "self" : r.description}"
    ])) == length(var.ingress_rules)
    error_message = "Two ingress rules allow the same protocol and ports from the same CIDR (or self, or share a description when they reference a group); merge them."
  }

  # Defence in depth: SSH is never open to the whole internet, whatever the caller passes.
  validation {
    condition = !anytrue([
      for r in var.ingress_rules : r.cidr_ipv4 == "0.0.0.0/0" && r.from_port <= 22 && r.to_port >= 22
    ])
    error_message = "SSH (port 22) must not be open to 0.0.0.0/0; pass specific ssh_cidr_blocks instead."
  }
}

variable "egress_rules" {
  description = "Outbound rules, each to one IPv4 range; ip_protocol is tcp unless given."
  type = list(object({
    description = string
    ip_protocol = optional(string, "tcp")
    from_port   = number
    to_port     = number
    cidr_ipv4   = string
  }))
  default = []

  validation {
    condition = alltrue([
      for r in var.egress_rules : r.from_port >= 0 && r.to_port <= 65535 && r.from_port <= r.to_port
    ])
    error_message = "Egress ports must satisfy 0 <= from_port <= to_port <= 65535."
  }

  validation {
    condition     = alltrue([for r in var.egress_rules : contains(["tcp", "udp"], r.ip_protocol)])
    error_message = "Egress ip_protocol must be tcp or udp."
  }

  validation {
    condition     = length(distinct([for r in var.egress_rules : "${r.ip_protocol}:${r.from_port}-${r.to_port}:${r.cidr_ipv4}"])) == length(var.egress_rules)
    error_message = "Two egress rules allow the same protocol and ports to the same CIDR; merge them."
  }
}
