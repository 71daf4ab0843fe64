output "vpc_id" {
  description = "ID of the bench VPC."
  value       = aws_vpc.this.id
}

output "vpc_cidr_block" {
  description = "IPv4 range of the VPC."
  value       = aws_vpc.this.cidr_block
}

# Instances are launched only once the fixed-address reservations exist, so
# none takes an address meant for the proxy or the metrics node.
output "public_subnet_ids" {
  description = "Public subnets, one per availability zone."
  value       = aws_subnet.public[*].id
  depends_on  = [aws_ec2_subnet_cidr_reservation.public_fixed]
}

output "public_subnet_cidr_blocks" {
  description = "IPv4 ranges of the public subnets."
  value       = aws_subnet.public[*].cidr_block
}

output "private_subnet_ids" {
  description = "Private subnets, one per availability zone."
  value       = aws_subnet.private[*].id
  depends_on  = [aws_ec2_subnet_cidr_reservation.private_fixed]
}

output "private_subnet_cidr_blocks" {
  description = "IPv4 ranges of the private subnets."
  value       = aws_subnet.private[*].cidr_block
}

output "nat_public_ip" {
  description = "The address private nodes reach the internet from."
  value       = aws_eip.nat.public_ip
}

output "public_fixed_cidr_block" {
  description = "Reserved range of the first public subnet for fixed addresses (explicit assignment only)."
  value       = aws_ec2_subnet_cidr_reservation.public_fixed.cidr_block
}

output "private_fixed_cidr_block" {
  description = "Reserved range of the first private subnet for fixed addresses (explicit assignment only)."
  value       = aws_ec2_subnet_cidr_reservation.private_fixed.cidr_block
}

output "nat_gateway_id" {
  description = "NAT gateway of the private subnets."
  value       = aws_nat_gateway.this.id
}
