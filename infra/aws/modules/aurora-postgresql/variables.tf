variable "name" {
  description = "Cluster identifier; instances are <name>-0, <name>-1, ..."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{0,55}[a-z0-9]$", var.name)) && !strcontains(var.name, "--")
    error_message = "name must be a valid RDS identifier: lower-case letters, digits and single dashes, starting with a letter."
  }
}

variable "engine_version" {
  description = "Aurora PostgreSQL version, major.minor (the parameter group family follows the major)."
  type        = string
  default     = "16.8"

  validation {
    condition     = can(regex("^[0-9]+\\.[0-9]+$", var.engine_version))
    error_message = "engine_version must be major.minor, such as 16.8."
  }
}

variable "instance_class" {
  description = "DB instance class of every instance, e.g. db.r7g.2xlarge."
  type        = string
  default     = "db.r7g.2xlarge"

  validation {
    condition     = can(regex("^db\\.[a-z0-9]+\\.[a-z0-9]+$", var.instance_class))
    error_message = "instance_class must look like db.r7g.2xlarge."
  }
}

variable "instance_count" {
  description = "Instances in the cluster: the first available is the writer, the rest are readers."
  type        = number
  default     = 2

  validation {
    condition     = var.instance_count >= 1 && var.instance_count <= 15 && floor(var.instance_count) == var.instance_count
    error_message = "instance_count must be a whole number from 1 to 15 (Aurora's limit)."
  }
}

variable "subnet_ids" {
  description = "Private subnets in two availability zones."
  type        = list(string)
}

variable "security_group_ids" {
  description = "Security groups of the cluster (5432 from the app nodes only)."
  type        = list(string)
}

variable "kms_key_arn" {
  description = "Customer-managed key for storage, Performance Insights and the managed master secret."
  type        = string
}

variable "database_name" {
  description = "Database created in a new cluster (ignored when restoring a snapshot, which brings its own)."
  type        = string
  default     = "mattermost"

  validation {
    condition     = can(regex("^[A-Za-z][A-Za-z0-9_]{0,62}$", var.database_name))
    error_message = "database_name must start with a letter and hold only letters, digits and underscores."
  }
}

variable "master_username" {
  description = "Master user of a new cluster; the password is generated and kept in Secrets Manager by RDS."
  type        = string
  default     = "mmuser"

  validation {
    condition     = can(regex("^[A-Za-z][A-Za-z0-9_]{0,15}$", var.master_username))
    error_message = "master_username must start with a letter, hold letters, digits or underscores, at most 16 characters."
  }
}

variable "snapshot_identifier" {
  description = "Cluster snapshot to restore (identifier or ARN); null for an empty cluster."
  type        = string
  default     = null
}

variable "cluster_parameters" {
  description = "Cluster parameter group entries."
  type = list(object({
    name         = string
    value        = string
    apply_method = optional(string, "immediate")
  }))
  default = []

  validation {
    condition     = alltrue([for p in var.cluster_parameters : contains(["immediate", "pending-reboot"], p.apply_method)])
    error_message = "apply_method must be immediate or pending-reboot."
  }
}

variable "performance_insights_enabled" {
  description = "Performance Insights on every instance (the seed benches had it on)."
  type        = bool
  default     = true
}

variable "log_retention_days" {
  description = "Days CloudWatch keeps the exported PostgreSQL log (the log group is deleted with the bench anyway)."
  type        = number
  default     = 7

  validation {
    condition     = contains([1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365], var.log_retention_days)
    error_message = "log_retention_days must be a CloudWatch retention: 1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180 or 365."
  }
}
