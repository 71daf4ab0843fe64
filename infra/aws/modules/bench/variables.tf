# Every size and count of the bench is a variable; the defaults are the release
# comparison bench of the seed reports ("perfcomp"). src/aws/presets.ts turns a
# preset name from gate.yml into these variables. A variable with a default is
# not nullable: the root module passes null for a setting its `bench` object
# leaves out, and that must mean the default.

variable "name" {
  description = "Bench name, unique per gate run (lg-<run id>-<attempt>); prefixes every resource."
  type        = string
  nullable    = false

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{1,23}[a-z0-9]$", var.name)) && !strcontains(var.name, "--")
    error_message = "name must be 3-25 lower-case letters, digits and single dashes, starting with a letter and not ending with a dash."
  }
}

variable "expires_at" {
  description = "RFC 3339 UTC time the bench expires (the ExpiresAt tag): its nodes power off and terminate, and its Aurora is deleted, then or at a later ExpiresAt a run job sets."
  type        = string
  nullable    = false

  validation {
    condition     = can(regex("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$", var.expires_at)) && can(formatdate("YYYY", var.expires_at))
    error_message = "expires_at must be an RFC 3339 UTC time such as 2026-01-31T18:00:00Z."
  }
}

variable "vpc_cidr" {
  description = "IPv4 /16 of the bench VPC."
  type        = string
  nullable    = false
  default     = "10.42.0.0/16"

  validation {
    condition     = can(cidrhost(var.vpc_cidr, 0)) && endswith(var.vpc_cidr, "/16")
    error_message = "vpc_cidr must be an IPv4 /16 such as 10.42.0.0/16."
  }
}

variable "availability_zones" {
  description = "Two availability zones; empty to use the first two of the region."
  type        = list(string)
  nullable    = false
  default     = []

  validation {
    condition     = length(var.availability_zones) == 0 || length(var.availability_zones) == 2
    error_message = "availability_zones must be empty or name exactly two zones."
  }
}

variable "controller_cidr_blocks" {
  description = "Where the gate's controller (the GitHub runner) connects from: Prometheus, Grafana and the agents' control API accept these ranges. Empty: nothing is reachable from outside the VPC."
  type        = list(string)
  nullable    = false
  default     = []

  # /16 (65536 addresses) is as wide as one organisation's egress range plausibly
  # gets; anything wider opens the agents' unauthenticated control API and
  # Prometheus to a good part of the internet. The gate itself passes a /32.
  validation {
    condition     = alltrue([for c in var.controller_cidr_blocks : can(regex("^([0-9]{1,3}\\.){3}[0-9]{1,3}/([0-9]|[12][0-9]|3[0-2])$", c)) && can(cidrhost(c, 0)) && try(tonumber(split("/", c)[1]) >= 16, false)])
    error_message = "controller_cidr_blocks must be IPv4 ranges of /16 or narrower, such as 203.0.113.7/32."
  }
}

variable "ssh_cidr_blocks" {
  description = "Ranges allowed to SSH into the nodes. Empty (the default): SSH is closed; use Session Manager."
  type        = list(string)
  nullable    = false
  default     = []

  # Same bound as controller_cidr_blocks: SSH is for a person's or an office's
  # addresses, never a wide range.
  validation {
    condition     = alltrue([for c in var.ssh_cidr_blocks : can(regex("^([0-9]{1,3}\\.){3}[0-9]{1,3}/([0-9]|[12][0-9]|3[0-2])$", c)) && can(cidrhost(c, 0)) && try(tonumber(split("/", c)[1]) >= 16, false)])
    error_message = "ssh_cidr_blocks must be IPv4 ranges of /16 or narrower; SSH is never opened to a wide range."
  }
}

variable "ssh_key_name" {
  description = "EC2 key pair for SSH; only useful with ssh_cidr_blocks."
  type        = string
  default     = null
}

variable "ami_id" {
  description = "AMI of every node; null for the latest Canonical Ubuntu 22.04 LTS amd64 image (the seed benches' OS)."
  type        = string
  default     = null

  validation {
    condition     = var.ami_id == null || can(regex("^ami-[0-9a-f]{8,17}$", var.ami_id))
    error_message = "ami_id must look like ami-0123456789abcdef0."
  }
}

variable "app_instance_type" {
  description = "Mattermost app node instance type."
  type        = string
  nullable    = false
  default     = "c7i.2xlarge"

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]*\\.[a-z0-9]+$", var.app_instance_type))
    error_message = "app_instance_type must look like c7i.2xlarge."
  }
}

variable "app_count" {
  description = "Mattermost app nodes (a cluster when more than one)."
  type        = number
  nullable    = false
  default     = 2

  validation {
    condition     = var.app_count >= 1 && var.app_count <= 20 && floor(var.app_count) == var.app_count
    error_message = "app_count must be a whole number from 1 to 20."
  }
}

variable "agent_instance_type" {
  description = "Load agent instance type (c7i.xlarge drives about 2000 users in the seed benches)."
  type        = string
  nullable    = false
  default     = "c7i.xlarge"

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]*\\.[a-z0-9]+$", var.agent_instance_type))
    error_message = "agent_instance_type must look like c7i.xlarge."
  }
}

variable "agent_count" {
  description = "Load agents."
  type        = number
  nullable    = false
  default     = 11

  validation {
    condition     = var.agent_count >= 1 && var.agent_count <= 100 && floor(var.agent_count) == var.agent_count
    error_message = "agent_count must be a whole number from 1 to 100."
  }
}

# Duet: both versions under test run at once on the same app nodes, so the
# noise of the hour (neighbours, the database's cache, the network) falls on
# both alike. Each slot drives its own half of the agents.
variable "duet" {
  description = "Run the baseline and candidate at the same time on the same app nodes, as two Mattermost services: slot a (:8065, the database db_name) and slot b (:8165, db_name_b), each with its own proxy entry (:80 and :8080), half of the agents and a Prometheus (:9090 and :9091). false: one version at a time."
  type        = bool
  nullable    = false
  default     = false

  validation {
    condition     = !var.duet || (var.agent_count >= 2 && var.agent_count % 2 == 0)
    error_message = "duet needs an even agent_count of at least 2: agents 0 .. agent_count/2 - 1 drive slot a, the rest slot b."
  }
}

variable "proxy_instance_type" {
  description = "nginx proxy instance type."
  type        = string
  nullable    = false
  default     = "c7i.xlarge"

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]*\\.[a-z0-9]+$", var.proxy_instance_type))
    error_message = "proxy_instance_type must look like c7i.xlarge."
  }
}

variable "metrics_instance_type" {
  description = "Metrics node instance type (Prometheus, Grafana, Pyroscope)."
  type        = string
  nullable    = false
  default     = "m7i.xlarge"

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]*\\.[a-z0-9]+$", var.metrics_instance_type))
    error_message = "metrics_instance_type must look like m7i.xlarge."
  }
}

variable "app_volume_size_gb" {
  description = "Root volume of each app node."
  type        = number
  nullable    = false
  default     = 20

  validation {
    condition     = var.app_volume_size_gb >= 10 && var.app_volume_size_gb <= 16384
    error_message = "app_volume_size_gb must be between 10 and 16384."
  }
}

variable "agent_volume_size_gb" {
  description = "Root volume of each agent."
  type        = number
  nullable    = false
  default     = 20

  validation {
    condition     = var.agent_volume_size_gb >= 10 && var.agent_volume_size_gb <= 16384
    error_message = "agent_volume_size_gb must be between 10 and 16384."
  }
}

variable "proxy_volume_size_gb" {
  description = "Root volume of the proxy (holds nginx's image cache, at most 3 GB)."
  type        = number
  nullable    = false
  default     = 20

  validation {
    condition     = var.proxy_volume_size_gb >= 10 && var.proxy_volume_size_gb <= 16384
    error_message = "proxy_volume_size_gb must be between 10 and 16384."
  }
}

variable "metrics_volume_size_gb" {
  description = "Root volume of the metrics node (the seed benches used 50-200 GB)."
  type        = number
  nullable    = false
  default     = 200

  validation {
    condition     = var.metrics_volume_size_gb >= 20 && var.metrics_volume_size_gb <= 16384
    error_message = "metrics_volume_size_gb must be between 20 and 16384."
  }
}

variable "db_instance_class" {
  description = "Aurora PostgreSQL instance class."
  type        = string
  nullable    = false
  default     = "db.r7g.2xlarge"

  validation {
    condition     = can(regex("^db\\.[a-z0-9]+\\.[a-z0-9]+$", var.db_instance_class))
    error_message = "db_instance_class must look like db.r7g.2xlarge."
  }
}

variable "db_count" {
  description = "Aurora instances: one writer, the rest readers."
  type        = number
  nullable    = false
  default     = 2

  validation {
    condition     = var.db_count >= 1 && var.db_count <= 15 && floor(var.db_count) == var.db_count
    error_message = "db_count must be a whole number from 1 to 15."
  }
}

variable "db_engine_version" {
  description = "Aurora PostgreSQL version, major.minor."
  type        = string
  nullable    = false
  default     = "16.8"

  validation {
    condition     = can(regex("^[0-9]+\\.[0-9]+$", var.db_engine_version))
    error_message = "db_engine_version must be major.minor, such as 16.8."
  }
}

variable "db_name" {
  description = "Database Mattermost uses (the seed dumps use ltdb)."
  type        = string
  nullable    = false
  default     = "mattermost"

  validation {
    condition     = can(regex("^[A-Za-z][A-Za-z0-9_]{0,62}$", var.db_name))
    error_message = "db_name must start with a letter and hold only letters, digits and underscores."
  }
}

variable "db_username" {
  description = "Master user of a new cluster (a restored snapshot keeps its own)."
  type        = string
  nullable    = false
  default     = "mmuser"

  validation {
    condition     = can(regex("^[A-Za-z][A-Za-z0-9_]{0,15}$", var.db_username))
    error_message = "db_username must start with a letter, hold letters, digits or underscores, at most 16 characters."
  }
}

variable "db_snapshot_identifier" {
  description = "Aurora cluster snapshot holding the dataset; null to start empty or load db_dump_url."
  type        = string
  default     = null

  validation {
    condition     = var.db_snapshot_identifier == null || can(regex("^(arn:aws[a-z-]*:rds:[a-z0-9-]+:[0-9]{12}:cluster-snapshot:)?[A-Za-z][A-Za-z0-9-]{0,254}$", var.db_snapshot_identifier))
    error_message = "db_snapshot_identifier must be a cluster snapshot identifier or ARN."
  }
}

variable "db_dump_url" {
  description = "HTTPS URL of a PostgreSQL dump (plain SQL, optionally .gz) the first app node loads before Mattermost starts; null for none."
  type        = string
  default     = null

  validation {
    condition     = var.db_dump_url == null || can(regex("^https://[^\\s'\"`$\\\\]+$", var.db_dump_url))
    error_message = "db_dump_url must be an https:// URL without quotes, spaces, backslashes or dollar signs."
  }

  validation {
    condition     = var.db_dump_url == null || var.db_snapshot_identifier == null
    error_message = "Set at most one of db_snapshot_identifier and db_dump_url."
  }
}

variable "db_cluster_parameters" {
  description = "Cluster parameter group entries; the defaults are the two the seed benches changed."
  nullable    = false
  type = list(object({
    name         = string
    value        = string
    apply_method = optional(string, "immediate")
  }))
  default = [
    { name = "random_page_cost", value = "1.1", apply_method = "immediate" },
    { name = "work_mem", value = "32768", apply_method = "immediate" },
  ]
}

variable "db_performance_insights" {
  description = "Performance Insights on the Aurora instances."
  type        = bool
  nullable    = false
  default     = true
}

variable "opensearch_count" {
  description = "OpenSearch data nodes: 0 (none) or 2, as in the seed ceiling tests."
  type        = number
  nullable    = false
  default     = 0

  validation {
    condition     = contains([0, 2], var.opensearch_count)
    error_message = "opensearch_count must be 0 or 2."
  }
}

variable "opensearch_instance_type" {
  description = "OpenSearch data node type."
  type        = string
  nullable    = false
  default     = "r6g.xlarge.search"

  validation {
    condition     = endswith(var.opensearch_instance_type, ".search")
    error_message = "opensearch_instance_type must end in .search, such as r6g.xlarge.search."
  }
}

variable "opensearch_engine_version" {
  description = "OpenSearch engine version."
  type        = string
  nullable    = false
  default     = "OpenSearch_2.17"

  validation {
    condition     = can(regex("^(OpenSearch|Elasticsearch)_[0-9]+\\.[0-9]+$", var.opensearch_engine_version))
    error_message = "opensearch_engine_version must look like OpenSearch_2.17."
  }
}

variable "opensearch_volume_size_gb" {
  description = "gp3 volume per OpenSearch node."
  type        = number
  nullable    = false
  default     = 200

  validation {
    condition     = var.opensearch_volume_size_gb >= 10 && var.opensearch_volume_size_gb <= 3072
    error_message = "opensearch_volume_size_gb must be between 10 and 3072."
  }
}

variable "mattermost_download_url" {
  description = "Release tarball of the Mattermost version installed first, e.g. https://releases.mattermost.com/10.12.0/mattermost-10.12.0-linux-amd64.tar.gz."
  type        = string
  nullable    = false

  validation {
    condition     = can(regex("^https://[^\\s'\"`$\\\\]+\\.tar\\.gz$", var.mattermost_download_url))
    error_message = "mattermost_download_url must be an https:// URL of a .tar.gz, without quotes, spaces, backslashes or dollar signs."
  }
}

variable "mattermost_license_secret_arn" {
  description = "Secrets Manager secret holding the Mattermost licence file (its text as the secret string); null to run unlicensed. The licence never appears in user data or state."
  type        = string
  default     = null

  validation {
    condition     = var.mattermost_license_secret_arn == null || can(regex("^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:[A-Za-z0-9/_+=.@-]+$", var.mattermost_license_secret_arn))
    error_message = "mattermost_license_secret_arn must be a Secrets Manager secret ARN."
  }
}

variable "mattermost_config_patch" {
  description = "JSON object deep-merged into Mattermost's config.json after the bench settings (gate.yml target.settings)."
  type        = string
  nullable    = false
  default     = "{}"

  validation {
    condition     = can(keys(jsondecode(var.mattermost_config_patch)))
    error_message = "mattermost_config_patch must be a JSON object."
  }

  # The bench wires these from its topology (src/chat-servers/mattermost/config-patch.ts
  # refuses them first); a patch that set them could point a node at another database.
  validation {
    condition = alltrue([
      for key in [
        ["SqlSettings", "DriverName"], ["SqlSettings", "DataSource"], ["SqlSettings", "DataSourceReplicas"],
        ["MetricsSettings", "Enable"], ["MetricsSettings", "ListenAddress"], ["ClusterSettings", "Enable"],
        ["ClusterSettings", "ClusterName"], ["ServiceSettings", "ListenAddress"],
      ] : !can(jsondecode(var.mattermost_config_patch)[key[0]][key[1]])
    ])
    error_message = "mattermost_config_patch must not set the database, metrics, cluster or listen settings; the bench sets them."
  }
}

variable "load_engine" {
  description = "What the agents run: k6, or load-test-ng (Mattermost's load-test agent API on port 4000)."
  type        = string
  nullable    = false
  default     = "k6"

  validation {
    condition     = contains(["k6", "load-test-ng"], var.load_engine)
    error_message = "load_engine must be k6 or load-test-ng."
  }
}

variable "k6_version" {
  description = "k6 release installed on the agents when load_engine is k6."
  type        = string
  nullable    = false
  default     = "v1.4.2"

  validation {
    condition     = can(regex("^v[0-9]+\\.[0-9]+\\.[0-9]+$", var.k6_version))
    error_message = "k6_version must look like v1.4.2."
  }
}

variable "loadtest_download_url" {
  description = "load-test-ng release tarball installed on the agents when load_engine is load-test-ng."
  type        = string
  nullable    = false
  default     = "https://github.com/mattermost/mattermost-load-test-ng/releases/download/v1.29.0/mattermost-load-test-ng-v1.29.0-linux-amd64.tar.gz"

  validation {
    condition     = can(regex("^https://[^\\s'\"`$\\\\]+\\.tar\\.gz$", var.loadtest_download_url))
    error_message = "loadtest_download_url must be an https:// URL of a .tar.gz."
  }
}

variable "metrics_images" {
  description = "Container images of the metrics stack."
  nullable    = false
  type = object({
    prometheus = optional(string, "prom/prometheus:v3.5.0")
    grafana    = optional(string, "grafana/grafana:11.6.0")
    pyroscope  = optional(string, "grafana/pyroscope:1.13.0")
    alloy      = optional(string, "grafana/alloy:v1.8.1")
  })
  default = {}

  validation {
    condition     = alltrue([for image in values(var.metrics_images) : can(regex("^[a-z0-9./_-]+:[A-Za-z0-9._-]+$", image))])
    error_message = "metrics_images entries must be image:tag references."
  }
}

variable "agent_api_port" {
  description = "Port of the agents' control API; null (the default) for the engine's own: k6's REST API on 6565, load-test-ng's ltapi on 4000."
  type        = number
  default     = null

  validation {
    # A conditional, not ||: Terraform before 1.12 evaluates both sides of ||.
    condition     = var.agent_api_port == null ? true : (var.agent_api_port >= 1024 && var.agent_api_port <= 65535 && var.agent_api_port != 6566)
    error_message = "agent_api_port must be between 1024 and 65535, and not 6566 (the k6 exporter's port)."
  }
}
