variable "name" {
  description = "Bench name (lg-<run id>-<attempt>): the schedule group's name and the role's prefix."
  type        = string
}

variable "expires_at" {
  description = "RFC 3339 UTC time the bench expires (the ExpiresAt tag): the database instances are deleted then."
  type        = string

  validation {
    condition     = can(regex("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$", var.expires_at)) && can(formatdate("YYYY", var.expires_at))
    error_message = "expires_at must be an RFC 3339 UTC time such as 2026-01-31T18:00:00Z."
  }
}

variable "partition" {
  description = "AWS partition (aws, aws-cn, ...), for the ARNs the role may act on."
  type        = string
}

variable "account_id" {
  description = "Account of the bench, for the ARNs the role may act on."
  type        = string
}

variable "region" {
  description = "Region of the bench, for the ARNs the role may act on."
  type        = string
}

variable "db_cluster_identifier" {
  description = "Aurora cluster deleted after its instances."
  type        = string
}

variable "db_instance_identifiers" {
  description = "Aurora instances deleted at the expiry."
  type        = list(string)
}

variable "db_secret_arn" {
  description = "The cluster's RDS-managed master-user secret, which RDS deletes with the cluster as the caller."
  type        = string
}

variable "nat_gateway_id" {
  description = "The bench's NAT gateway, deleted at the expiry (it bills by the hour, and nothing in the VPC runs by then)."
  type        = string
}

variable "opensearch_domain_name" {
  description = "The bench's OpenSearch domain, deleted at the expiry; null when the bench has none."
  type        = string
  default     = null
}
