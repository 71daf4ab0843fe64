# Ceiling-test bench 2XL.552 of the seed report: 5 x c7i.2xlarge app nodes,
# 5 x db.r7g.2xlarge Aurora instances, 2 OpenSearch nodes and an m7i.4xlarge
# proxy. The agents are sized for an unbounded test of up to 70000 users at 2000
# users per agent (the preset derives this count from gate.yml). A complete root
# module with local state, for `terraform plan` by hand.

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
      Bench     = "lg-example-2xl552"
      ExpiresAt = local.expires_at
    }
  }
}

module "bench" {
  source = "../../modules/bench"

  name                    = "lg-example-2xl552"
  expires_at              = local.expires_at
  mattermost_download_url = "https://releases.mattermost.com/9.5.7/mattermost-9.5.7-linux-amd64.tar.gz"

  app_instance_type     = "c7i.2xlarge"
  app_count             = 5
  db_instance_class     = "db.r7g.2xlarge"
  db_count              = 5
  opensearch_count      = 2
  proxy_instance_type   = "m7i.4xlarge"
  agent_instance_type   = "c7i.xlarge"
  agent_count           = 35
  metrics_instance_type = "m7i.2xlarge"

  # The seed report restored a prepared 100M-post cluster; name yours here.
  db_name                = "ltdb"
  db_snapshot_identifier = "loadgate-100m-dataset"

  load_engine    = "load-test-ng"
  agent_api_port = 4000
}
