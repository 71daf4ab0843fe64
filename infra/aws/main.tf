# The bench of one gate run; every setting is a variable of this root module.

module "bench" {
  source = "./modules/bench"

  name                          = var.bench_name
  vpc_cidr                      = var.vpc_cidr
  availability_zones            = var.availability_zones
  controller_cidr_blocks        = var.controller_cidr_blocks
  ssh_cidr_blocks               = var.ssh_cidr_blocks
  ssh_key_name                  = var.ssh_key_name
  ami_id                        = var.ami_id
  app_instance_type             = var.app_instance_type
  app_count                     = var.app_count
  agent_instance_type           = var.agent_instance_type
  agent_count                   = var.agent_count
  proxy_instance_type           = var.proxy_instance_type
  metrics_instance_type         = var.metrics_instance_type
  app_volume_size_gb            = var.app_volume_size_gb
  agent_volume_size_gb          = var.agent_volume_size_gb
  proxy_volume_size_gb          = var.proxy_volume_size_gb
  metrics_volume_size_gb        = var.metrics_volume_size_gb
  db_instance_class             = var.db_instance_class
  db_count                      = var.db_count
  db_engine_version             = var.db_engine_version
  db_name                       = var.db_name
  db_username                   = var.db_username
  db_snapshot_identifier        = var.db_snapshot_identifier
  db_dump_url                   = var.db_dump_url
  db_cluster_parameters         = var.db_cluster_parameters
  db_performance_insights       = var.db_performance_insights
  opensearch_count              = var.opensearch_count
  opensearch_instance_type      = var.opensearch_instance_type
  opensearch_engine_version     = var.opensearch_engine_version
  opensearch_volume_size_gb     = var.opensearch_volume_size_gb
  mattermost_download_url       = var.mattermost_download_url
  mattermost_license_secret_arn = var.mattermost_license_secret_arn
  mattermost_config_patch       = var.mattermost_config_patch
  load_engine                   = var.load_engine
  k6_version                    = var.k6_version
  loadtest_download_url         = var.loadtest_download_url
  metrics_images                = var.metrics_images
  agent_api_port                = var.agent_api_port
}
