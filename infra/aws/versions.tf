terraform {
  # 1.11: S3 native state locking (use_lockfile) is generally available.
  required_version = ">= 1.11.0"

  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 6.0, < 7.0"
    }
  }

  # Partial configuration: bucket, key and region are given at init, one state
  # key per gate run (see src/aws/run-info.ts and docs/aws.md):
  #   terraform init -backend-config=bucket=... -backend-config=region=... \
  #     -backend-config=key=loadgate/<owner>/<repo>/<run id>/<attempt>/terraform.tfstate
  backend "s3" {
    use_lockfile = true
    encrypt      = true
  }
}
