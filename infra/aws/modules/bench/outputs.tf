# Read by the gate through `terraform output -json` (src/aws/terraform-outputs.ts).

output "bench_name" {
  description = "Name every resource of the bench starts with."
  value       = var.name
}

output "region" {
  description = "AWS region of the bench."
  value       = local.region
}

output "vpc_id" {
  description = "ID of the bench VPC."
  value       = module.network.vpc_id
}

output "proxy_url" {
  description = "Where users reach Mattermost inside the VPC (the agents' target and the site URL): the nginx proxy, or the single app node on :8065 when there is one app node and so no proxy."
  value       = local.proxy_url
}

output "proxy_instance_id" {
  description = "Instance ID of the proxy; null when a single app node is reached directly."
  value       = local.proxy_instance_id
}

output "app_private_ips" {
  description = "Private addresses of the app nodes (app0, app1, ...)."
  value       = module.app.private_ips
}

output "app_instance_ids" {
  description = "Instance IDs of the app nodes, for SSM commands such as switching the Mattermost version."
  value       = module.app.ids
}

output "agent_private_ips" {
  description = "Private addresses of the load agents."
  value       = module.agent.private_ips
}

output "agent_public_ips" {
  description = "Public addresses of the load agents (the controller drives them here)."
  value       = module.agent.public_ips
}

output "agent_instance_ids" {
  description = "Instance IDs of the load agents."
  value       = module.agent.ids
}

output "agent_api_port" {
  description = "Port of the agents' control API."
  value       = local.agent_api_port
}

output "load_engine" {
  description = "What the agents run: k6 or load-test-ng."
  value       = var.load_engine
}

output "metrics_instance_id" {
  description = "Instance ID of the metrics node."
  value       = module.metrics.ids[0]
}

output "metrics_private_ip" {
  description = "Private address of the metrics node."
  value       = local.metrics_private_ip
}

output "metrics_public_ip" {
  description = "Public address of the metrics node."
  value       = module.metrics.public_ips[0]
}

output "prometheus_url" {
  description = "Prometheus API for the coordinator's health queries."
  value       = "http://${module.metrics.public_ips[0]}:9090"
}

output "grafana_url" {
  description = "Grafana on the metrics node."
  value       = "http://${module.metrics.public_ips[0]}:3000"
}

output "pyroscope_url" {
  description = "Pyroscope on the metrics node."
  value       = "http://${module.metrics.public_ips[0]}:${local.pyroscope_port}"
}

output "grafana_token_secret_arn" {
  description = "Secret holding a Grafana service-account token with the Editor role (written by the metrics node at boot)."
  value       = aws_secretsmanager_secret.grafana_token.arn
}

output "db_cluster_identifier" {
  description = "Aurora cluster identifier."
  value       = module.db.cluster_identifier
}

output "db_writer_endpoint" {
  description = "Aurora writer endpoint."
  value       = module.db.writer_endpoint
}

output "db_reader_endpoint" {
  description = "Aurora reader endpoint."
  value       = module.db.reader_endpoint
}

output "db_port" {
  description = "PostgreSQL port."
  value       = module.db.port
}

output "db_name" {
  description = "Database Mattermost uses."
  value       = var.db_name
}

output "db_secret_arn" {
  description = "Secret RDS keeps the master credentials in."
  value       = module.db.master_user_secret_arn
}

output "opensearch_endpoint" {
  description = "OpenSearch endpoint, or null without OpenSearch."
  value       = var.opensearch_count > 0 ? module.opensearch[0].endpoint : null
}

output "instances" {
  description = "Role to \"count x type\", as recorded in run results' bench fingerprint."
  value = merge(
    {
      app     = "${var.app_count} x ${var.app_instance_type}"
      agent   = "${var.agent_count} x ${var.agent_instance_type}"
      metrics = "1 x ${var.metrics_instance_type}"
      db      = "${var.db_count} x ${var.db_instance_class}"
    },
    local.proxy_enabled ? { proxy = "1 x ${var.proxy_instance_type}" } : {},
    var.opensearch_count > 0 ? { opensearch = "${var.opensearch_count} x ${var.opensearch_instance_type}" } : {},
  )
}

output "controller_ingress" {
  description = "The controller's ingress rules without their source: each security group and TCP port range the controller reaches. A workflow job on its own runner adds its address to these, and removes it when it ends."
  value = flatten([
    for role, group_id in { metrics = module.metrics_sg.id, agent = module.agent_sg.id } : [
      for rule in local.controller_ports[role] : { security_group_id = group_id, ip_protocol = "tcp", from_port = rule.from_port, to_port = rule.to_port, description = rule.description }
    ]
  ])
}

output "duet_slots" {
  description = "The two Mattermost services of a duet bench (bench variable duet), in slot order a, b; empty when duet is false. Each: slot (a or b), proxy_url (where its users reach it: the proxy's :80 or :8080, or the single app node's :8065 or :8165), prometheus_url (its own Prometheus, :9090 or :9091), app_port (8065 or 8165) and metrics_port (8067 or 8167) on every app node, and agent_indices (the agents that drive it: the first half for a, the second for b)."
  value       = local.duet_slots
}
