variable "name" {
  description = "Domain name (3-28 lower-case letters, digits or dashes)."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{2,27}$", var.name))
    error_message = "name must be 3-28 lower-case letters, digits or dashes, starting with a letter (an OpenSearch domain name)."
  }
}

variable "engine_version" {
  description = "OpenSearch_X.Y, or Elasticsearch_7.10 as in the seed ceiling tests."
  type        = string
  default     = "OpenSearch_2.17"

  validation {
    condition     = can(regex("^(OpenSearch|Elasticsearch)_[0-9]+\\.[0-9]+$", var.engine_version))
    error_message = "engine_version must look like OpenSearch_2.17 or Elasticsearch_7.10."
  }
}

variable "instance_type" {
  description = "Data node instance type."
  type        = string
  default     = "r6g.xlarge.search"

  validation {
    condition     = endswith(var.instance_type, ".search")
    error_message = "instance_type must be an OpenSearch type ending in .search, such as r6g.xlarge.search."
  }
}

variable "instance_count" {
  description = "Data nodes; the seed ceiling tests used 2, one per availability zone."
  type        = number
  default     = 2

  validation {
    condition     = var.instance_count >= 1 && var.instance_count <= 10 && floor(var.instance_count) == var.instance_count
    error_message = "instance_count must be a whole number from 1 to 10."
  }
}

variable "volume_size_gb" {
  description = "gp3 volume per data node."
  type        = number
  default     = 200
}

variable "subnet_ids" {
  description = "Private subnets, one per availability zone used."
  type        = list(string)
}

variable "security_group_ids" {
  description = "Security groups of the domain (443 from the app nodes only)."
  type        = list(string)
}

variable "kms_key_arn" {
  description = "Customer-managed key for encryption at rest."
  type        = string
}
