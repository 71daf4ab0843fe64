variable "name" {
  description = "Name prefix of the instances (bench name and role, e.g. lg-123-1-app)."
  type        = string
}

variable "role" {
  description = "Bench role of these instances; also the host name prefix (app0, agent3, ...) Prometheus labels them by."
  type        = string

  validation {
    condition     = contains(["app", "agent", "proxy", "metrics"], var.role)
    error_message = "role must be one of app, agent, proxy, metrics."
  }
}

variable "instance_count" {
  description = "How many instances of this role."
  type        = number

  validation {
    condition     = var.instance_count >= 1 && var.instance_count <= 100 && floor(var.instance_count) == var.instance_count
    error_message = "instance_count must be a whole number from 1 to 100."
  }
}

variable "instance_type" {
  description = "EC2 instance type, e.g. c7i.2xlarge."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]*\\.[a-z0-9]+$", var.instance_type))
    error_message = "instance_type must look like c7i.2xlarge."
  }
}

variable "ami_id" {
  description = "AMI of every instance (Ubuntu 22.04 LTS, amd64)."
  type        = string
}

variable "subnet_ids" {
  description = "Subnets the instances are spread over, round robin."
  type        = list(string)

  validation {
    condition     = length(var.subnet_ids) >= 1
    error_message = "subnet_ids must name at least one subnet."
  }
}

variable "private_ips" {
  description = "Fixed private addresses, one per instance; empty to let AWS choose. Used where another role needs the address before this one exists."
  type        = list(string)
  default     = []
}

variable "security_group_ids" {
  description = "Security groups of the instances."
  type        = list(string)
}

variable "associate_public_ip_address" {
  description = "Give each instance a public address (only for roles the controller reaches from outside the VPC)."
  type        = bool
  default     = false
}

variable "iam_instance_profile" {
  description = "Instance profile name (SSM access and, per role, the secrets it reads)."
  type        = string
}

variable "key_name" {
  description = "EC2 key pair for SSH; null when SSH is not used."
  type        = string
  default     = null
}

variable "root_volume_size_gb" {
  description = "Size of the encrypted gp3 root volume."
  type        = number
  default     = 20

  validation {
    condition     = var.root_volume_size_gb >= 8 && var.root_volume_size_gb <= 16384
    error_message = "root_volume_size_gb must be between 8 and 16384."
  }
}

variable "user_data_templates" {
  description = "Paths of templatefile() templates, rendered in order and joined into one shell script."
  type        = list(string)
}

variable "user_data_vars" {
  description = "Variables of the templates; node_index and node_name are added per instance."
  type        = map(string)
  default     = {}
}
