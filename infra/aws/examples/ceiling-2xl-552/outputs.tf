output "proxy_url" {
  description = "Mattermost through the proxy, inside the VPC."
  value       = module.bench.proxy_url
}

output "grafana_url" {
  description = "Grafana on the metrics node."
  value       = module.bench.grafana_url
}

output "instances" {
  description = "Role to \"count x type\"."
  value       = module.bench.instances
}
