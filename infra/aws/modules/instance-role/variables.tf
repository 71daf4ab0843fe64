variable "name" {
  description = "Name of the role and its instance profile (bench name and role)."
  type        = string

  validation {
    condition     = can(regex("^[A-Za-z0-9+=,.@_-]{1,64}$", var.name))
    error_message = "name must be a valid IAM role name of at most 64 characters."
  }
}

variable "readable_secret_arns" {
  description = "Secrets Manager secrets the instances may read (licence, database credentials)."
  type        = list(string)
  default     = []
}

variable "writable_secret_arns" {
  description = "Secrets Manager secrets the instances may write (the Grafana admin password the metrics node generates)."
  type        = list(string)
  default     = []
}

variable "kms_key_arns" {
  description = "Customer-managed KMS keys those secrets are encrypted with."
  type        = list(string)
  default     = []
}
