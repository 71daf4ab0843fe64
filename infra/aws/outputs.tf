# Everything the bench module reports, read by the gate with `terraform output -json`
# (src/aws/terraform-outputs.ts parses it).

output "bench_name" {
  description = "Name every resource of the bench starts with."
  value       = module.bench.bench_name
}

output "region" {
  description = "AWS region of the bench."
  value       = module.bench.region
}

output "vpc_id" {
  description = "ID of the bench VPC."
  value       = module.bench.vpc_id
}

output "proxy_url" {
  description = "Where users reach Mattermost inside the VPC (the agents' target and the site URL): the nginx proxy, or the single app node on :8065 when there is one app node and so no proxy."
  value       = module.bench.proxy_url
}

output "proxy_instance_id" {
  description = "Instance ID of the proxy; null when a single app node is reached directly."
  value       = module.bench.proxy_instance_id
}

output "app_private_ips" {
  description = "Private addresses of the app nodes (app0, app1, ...)."
  value       = module.bench.app_private_ips
}

output "app_instance_ids" {
  description = "Instance IDs of the app nodes, for SSM commands such as switching the Mattermost version."
  value       = module.bench.app_instance_ids
}

output "agent_private_ips" {
  description = "Private addresses of the load agents."
  value       = module.bench.agent_private_ips
}

output "agent_public_ips" {
  description = "Public addresses of the load agents (the controller drives them here)."
  value       = module.bench.agent_public_ips
}

output "agent_instance_ids" {
  description = "Instance IDs of the load agents."
  value       = module.bench.agent_instance_ids
}

output "agent_api_port" {
  description = "Port of the agents' control API."
  value       = module.bench.agent_api_port
}

output "load_engine" {
  description = "What the agents run: k6 or load-test-ng."
  value       = module.bench.load_engine
}

output "metrics_instance_id" {
  description = "Instance ID of the metrics node."
  value       = module.bench.metrics_instance_id
}

output "metrics_private_ip" {
  description = "Private address of the metrics node."
  value       = module.bench.metrics_private_ip
}

output "metrics_public_ip" {
  description = "Public address of the metrics node."
  value       = module.bench.metrics_public_ip
}

output "prometheus_url" {
  description = "Prometheus API for the coordinator's health queries."
  value       = module.bench.prometheus_url
}

output "grafana_url" {
  description = "Grafana on the metrics node."
  value       = module.bench.grafana_url
}

output "pyroscope_url" {
  description = "Pyroscope on the metrics node."
  value       = module.bench.pyroscope_url
}

output "grafana_token_secret_arn" {
  description = "Secret holding a Grafana service-account token with the Editor role (written by the metrics node at boot)."
  value       = module.bench.grafana_token_secret_arn
}

output "db_cluster_identifier" {
  description = "Aurora cluster identifier."
  value       = module.bench.db_cluster_identifier
}

output "db_writer_endpoint" {
  description = "Aurora writer endpoint."
  value       = module.bench.db_writer_endpoint
}

output "db_reader_endpoint" {
  description = "Aurora reader endpoint."
  value       = module.bench.db_reader_endpoint
}

output "db_port" {
  description = "PostgreSQL port."
  value       = module.bench.db_port
}

output "db_name" {
  description = "Database Mattermost uses."
  value       = module.bench.db_name
}

output "db_secret_arn" {
  description = "Secret RDS keeps the master credentials in."
  value       = module.bench.db_secret_arn
}

output "opensearch_endpoint" {
  description = "OpenSearch endpoint, or null without OpenSearch."
  value       = module.bench.opensearch_endpoint
}

output "instances" {
  description = "Role to \"count x type\", as recorded in run results' bench fingerprint."
  value       = module.bench.instances
}

output "controller_ingress" {
  description = "Security groups and TCP ports the controller reaches (read by action/lib/provision.sh for the run jobs, which admit their own runners; not part of the bench description)."
  value       = module.bench.controller_ingress
}

output "duet_slots" {
  description = "The two Mattermost services of a duet bench (bench variable duet), in slot order a, b; empty when duet is false. Each: slot (a or b), proxy_url (where its users reach it: the proxy's :80 or :8080, or the single app node's :8065 or :8165), prometheus_url (its own Prometheus, :9090 or :9091), app_port (8065 or 8165) and metrics_port (8067 or 8167) on every app node, and agent_indices (the agents that drive it: the first half for a, the second for b)."
  value       = module.bench.duet_slots
}
