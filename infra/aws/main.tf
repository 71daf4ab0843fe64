# The bench of one gate run. Each setting is read from var.bench by the module
# variable's own name; one left out is null, which the module takes as its default.

module "bench" {
  source = "./modules/bench"

  name                          = var.bench_name
  expires_at                    = var.expires_at
  vpc_cidr                      = try(var.bench.vpc_cidr, null)
  availability_zones            = try(var.bench.availability_zones, null)
  controller_cidr_blocks        = try(var.bench.controller_cidr_blocks, null)
  ssh_cidr_blocks               = try(var.bench.ssh_cidr_blocks, null)
  ssh_key_name                  = try(var.bench.ssh_key_name, null)
  ami_id                        = try(var.bench.ami_id, null)
  app_instance_type             = try(var.bench.app_instance_type, null)
  app_count                     = try(var.bench.app_count, null)
  agent_instance_type           = try(var.bench.agent_instance_type, null)
  agent_count                   = try(var.bench.agent_count, null)
  proxy_instance_type           = try(var.bench.proxy_instance_type, null)
  metrics_instance_type         = try(var.bench.metrics_instance_type, null)
  app_volume_size_gb            = try(var.bench.app_volume_size_gb, null)
  agent_volume_size_gb          = try(var.bench.agent_volume_size_gb, null)
  proxy_volume_size_gb          = try(var.bench.proxy_volume_size_gb, null)
  metrics_volume_size_gb        = try(var.bench.metrics_volume_size_gb, null)
  db_instance_class             = try(var.bench.db_instance_class, null)
  db_count                      = try(var.bench.db_count, null)
  db_engine_version             = try(var.bench.db_engine_version, null)
  db_name                       = try(var.bench.db_name, null)
  db_username                   = try(var.bench.db_username, null)
  db_snapshot_identifier        = try(var.bench.db_snapshot_identifier, null)
  db_dump_url                   = try(var.bench.db_dump_url, null)
  db_cluster_parameters         = try(var.bench.db_cluster_parameters, null)
  db_performance_insights       = try(var.bench.db_performance_insights, null)
  opensearch_count              = try(var.bench.opensearch_count, null)
  opensearch_instance_type      = try(var.bench.opensearch_instance_type, null)
  opensearch_engine_version     = try(var.bench.opensearch_engine_version, null)
  opensearch_volume_size_gb     = try(var.bench.opensearch_volume_size_gb, null)
  mattermost_download_url       = try(var.bench.mattermost_download_url, null)
  mattermost_license_secret_arn = try(var.bench.mattermost_license_secret_arn, null)
  mattermost_config_patch       = try(var.bench.mattermost_config_patch, null)
  load_engine                   = try(var.bench.load_engine, null)
  k6_version                    = try(var.bench.k6_version, null)
  loadtest_download_url         = try(var.bench.loadtest_download_url, null)
  metrics_images                = try(var.bench.metrics_images, null)
  agent_api_port                = try(var.bench.agent_api_port, null)
  duet                          = try(var.bench.duet, null)
}
