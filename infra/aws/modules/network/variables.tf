variable "name" {
  description = "Name prefix of every network resource (the bench name)."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{2,24}$", var.name))
    error_message = "name must be 3-25 lower-case letters, digits or dashes, starting with a letter."
  }
}

variable "cidr_block" {
  description = "IPv4 range of the VPC. A /16: every subnet is a /24 carved from it."
  type        = string
  default     = "10.42.0.0/16"

  validation {
    condition     = can(cidrhost(var.cidr_block, 0)) && endswith(var.cidr_block, "/16")
    error_message = "cidr_block must be an IPv4 /16 such as 10.42.0.0/16."
  }
}

variable "availability_zones" {
  description = "The two availability zones the subnets span (Aurora and OpenSearch need two)."
  type        = list(string)

  validation {
    condition     = length(var.availability_zones) == 2 && length(distinct(var.availability_zones)) == 2
    error_message = "availability_zones must name exactly two different zones."
  }
}
