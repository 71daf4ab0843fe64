provider "aws" {
  region = var.region

  # Every taggable resource carries the run it belongs to and when it may be
  # destroyed; the janitor workflow finds expired benches by these tags.
  default_tags {
    tags = {
      Project    = "loadgate"
      Bench      = var.bench_name
      Repository = var.repository
      RunId      = var.run_id
      RunAttempt = tostring(var.run_attempt)
      Commit     = var.commit_sha
      StateKey   = var.state_key
      ExpiresAt  = var.expires_at
    }
  }
}
