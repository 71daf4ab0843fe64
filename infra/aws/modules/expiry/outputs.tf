output "schedule_group" {
  description = "Schedule group holding the bench's expiry schedules; a run job moves them with the ExpiresAt tag."
  value       = aws_scheduler_schedule_group.this.name
}

output "schedules" {
  description = "Expiry schedules by name: their at() expressions, the database instances' first."
  value       = { for schedule in concat(aws_scheduler_schedule.db_instance, values(aws_scheduler_schedule.db_cluster)) : schedule.name => schedule.schedule_expression }
}
