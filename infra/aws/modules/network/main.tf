# One VPC per bench: two public subnets (NAT gateway and the nodes the controller
# reaches: agents, metrics) and two private subnets (app, proxy, Aurora, OpenSearch),
# one of each per availability zone. Private nodes reach the internet (release
# downloads, AWS APIs) through a single NAT gateway; a bench lives a few hours, so
# one gateway is enough.

resource "aws_vpc" "this" {
  #checkov:skip=CKV2_AWS_11:The VPC exists for one gate run (hours) and carries only synthetic load; flow logs would need a log group, a role and a retention policy that outlive it.
  #checkov:skip=CKV2_AWS_12:Nothing is ever placed in the VPC's default security group (every instance, the Aurora cluster and the OpenSearch domain name their own group, test/aws/hcl-shape.test.ts checks it), so its member-to-member rule reaches nobody; adopting it with aws_default_security_group would need the role to change an untagged group, which tag-scoped IAM cannot limit to this bench.
  cidr_block           = var.cidr_block
  enable_dns_support   = true
  enable_dns_hostnames = true

  tags = {
    Name = var.name
  }
}

resource "aws_internet_gateway" "this" {
  vpc_id = aws_vpc.this.id

  tags = {
    Name = var.name
  }
}

resource "aws_subnet" "public" {
  count = length(var.availability_zones)

  vpc_id            = aws_vpc.this.id
  availability_zone = var.availability_zones[count.index]
  cidr_block        = cidrsubnet(var.cidr_block, 8, count.index)
  # Public addresses are requested per instance, never by default.
  map_public_ip_on_launch = false

  tags = {
    Name = "${var.name}-public-${count.index}"
    Tier = "public"
  }
}

resource "aws_subnet" "private" {
  count = length(var.availability_zones)

  vpc_id                  = aws_vpc.this.id
  availability_zone       = var.availability_zones[count.index]
  cidr_block              = cidrsubnet(var.cidr_block, 8, 100 + count.index)
  map_public_ip_on_launch = false

  tags = {
    Name = "${var.name}-private-${count.index}"
    Tier = "private"
  }
}

# Addresses .8-.15 of the first public and private subnet are reserved for
# nodes with fixed addresses (the metrics node and the proxy, whose addresses
# other nodes need before they exist): AWS never hands them out on its own.
resource "aws_ec2_subnet_cidr_reservation" "public_fixed" {
  subnet_id        = aws_subnet.public[0].id
  cidr_block       = cidrsubnet(aws_subnet.public[0].cidr_block, 5, 1)
  reservation_type = "explicit"
  description      = "${var.name}: fixed addresses"
}

resource "aws_ec2_subnet_cidr_reservation" "private_fixed" {
  subnet_id        = aws_subnet.private[0].id
  cidr_block       = cidrsubnet(aws_subnet.private[0].cidr_block, 5, 1)
  reservation_type = "explicit"
  description      = "${var.name}: fixed addresses"
}

resource "aws_eip" "nat" {
  domain = "vpc"

  tags = {
    Name = "${var.name}-nat"
  }
}

resource "aws_nat_gateway" "this" {
  allocation_id = aws_eip.nat.id
  subnet_id     = aws_subnet.public[0].id

  tags = {
    Name = var.name
  }

  # After the reservation: a NAT gateway takes a free address of its subnet,
  # and without this it could take the metrics node's fixed one.
  depends_on = [aws_internet_gateway.this, aws_ec2_subnet_cidr_reservation.public_fixed]
}

resource "aws_route_table" "public" {
  vpc_id = aws_vpc.this.id

  route {
    cidr_block = "0.0.0.0/0"
    gateway_id = aws_internet_gateway.this.id
  }

  tags = {
    Name = "${var.name}-public"
  }
}

resource "aws_route_table" "private" {
  vpc_id = aws_vpc.this.id

  route {
    cidr_block     = "0.0.0.0/0"
    nat_gateway_id = aws_nat_gateway.this.id
  }

  tags = {
    Name = "${var.name}-private"
  }
}

resource "aws_route_table_association" "public" {
  count = length(aws_subnet.public)

  subnet_id      = aws_subnet.public[count.index].id
  route_table_id = aws_route_table.public.id
}

resource "aws_route_table_association" "private" {
  count = length(aws_subnet.private)

  subnet_id      = aws_subnet.private[count.index].id
  route_table_id = aws_route_table.private.id
}
