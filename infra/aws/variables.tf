# The root module: the bench module plus the run the bench belongs to (tags,
# state key, expiry). The bench's own settings come as one object, `bench`, so
# that modules/bench/variables.tf is the only place they are declared, typed and
# validated. src/aws/tfvars.ts writes these variables as terraform.tfvars.json.

variable "region" {
  description = "AWS region of the bench."
  type        = string
  default     = "us-east-1"

  validation {
    condition     = can(regex("^[a-z]{2}(-[a-z]+)+-[0-9]$", var.region))
    error_message = "region must be an AWS region such as us-east-1."
  }
}

variable "bench_name" {
  description = "Bench name, unique per gate run (lg-<run id>-<attempt>); prefixes every resource."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{1,23}[a-z0-9]$", var.bench_name)) && !strcontains(var.bench_name, "--")
    error_message = "bench_name must be 3-25 lower-case letters, digits and single dashes, starting with a letter and not ending with a dash."
  }
}

variable "repository" {
  description = "GitHub repository running the gate (owner/name), for the Repository tag."
  type        = string

  validation {
    condition     = can(regex("^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$", var.repository))
    error_message = "repository must look like owner/name."
  }
}

variable "run_id" {
  description = "GitHub Actions run ID (or another ID for a run by hand), for the RunId tag."
  type        = string

  validation {
    condition     = can(regex("^[A-Za-z0-9._-]{1,64}$", var.run_id))
    error_message = "run_id must be 1-64 letters, digits, dots, dashes or underscores."
  }
}

variable "run_attempt" {
  description = "GitHub Actions run attempt, for the RunAttempt tag."
  type        = number
  default     = 1

  validation {
    condition     = var.run_attempt >= 1 && floor(var.run_attempt) == var.run_attempt
    error_message = "run_attempt must be a whole number from 1."
  }
}

variable "commit_sha" {
  description = "Commit of the gate's workflow run, for the Commit tag."
  type        = string

  validation {
    condition     = can(regex("^[0-9a-f]{7,40}$", var.commit_sha))
    error_message = "commit_sha must be a git commit hash (7-40 hex digits)."
  }
}

variable "state_key" {
  description = "S3 key of this bench's Terraform state, for the StateKey tag the janitor destroys by."
  type        = string

  validation {
    condition     = can(regex("^loadgate/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+/[A-Za-z0-9._-]+/[0-9]+/terraform\\.tfstate$", var.state_key))
    error_message = "state_key must look like loadgate/<owner>/<repo>/<run id>/<attempt>/terraform.tfstate."
  }
}

variable "expires_at" {
  description = "RFC 3339 UTC time after which the janitor destroys the bench (ExpiresAt tag)."
  type        = string

  validation {
    condition     = can(regex("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$", var.expires_at)) && can(formatdate("YYYY", var.expires_at))
    error_message = "expires_at must be an RFC 3339 UTC time such as 2026-01-31T18:00:00Z."
  }
}

variable "bench" {
  description = "Settings of modules/bench by its variable names (all but name, which is bench_name), such as app_count or mattermost_download_url. One left out takes the module's default; the module checks every value."
  # `any`: the settings are typed and validated once, by the module's variables.
  type     = any
  nullable = false

  validation {
    condition     = can(keys(var.bench))
    error_message = "bench must be an object of modules/bench settings, such as { app_count = 2 }."
  }
}
