# The release-comparison bench of the seed reports (preset "perfcomp"): 2 x
# c7i.2xlarge app nodes, 11 x c7i.xlarge agents, a c7i.xlarge proxy and Aurora
# PostgreSQL on 2 x db.r7g.2xlarge. A complete root module with local state, for
# `terraform plan` by hand; the gate itself uses infra/aws with S3 state.

locals {
  # The nodes power off and the database is deleted at this time, whatever
  # happens to the state: set it to when you are done with the bench.
  expires_at = "2030-01-01T00:00:00Z"
}

provider "aws" {
  region = "us-east-1"

  default_tags {
    tags = {
      Project   = "loadgate"
      Bench     = "lg-example-perfcomp"
      ExpiresAt = local.expires_at
    }
  }
}

module "bench" {
  source = "../../modules/bench"

  name                    = "lg-example-perfcomp"
  expires_at              = local.expires_at
  mattermost_download_url = "https://releases.mattermost.com/10.12.0/mattermost-10.12.0-linux-amd64.tar.gz"

  # The defaults of modules/bench are this preset; spelled out for the reader.
  app_instance_type   = "c7i.2xlarge"
  app_count           = 2
  agent_instance_type = "c7i.xlarge"
  agent_count         = 11
  proxy_instance_type = "c7i.xlarge"
  db_instance_class   = "db.r7g.2xlarge"
  db_count            = 2
  opensearch_count    = 0

  # The 12M-post dataset of the release comparisons.
  db_name     = "ltdb"
  db_dump_url = "https://lt-public-data.s3.amazonaws.com/12M_610_fixed_psql.sql.gz"
}
