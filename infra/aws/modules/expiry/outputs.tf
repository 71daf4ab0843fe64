output "schedule_group" {
  description = "Schedule group holding the bench's expiry schedules; a run job moves them with the ExpiresAt tag."
  value       = aws_scheduler_schedule_group.this.name
}

output "schedules" {
  description = "Expiry schedules by name: their at() expressions."
  value       = { for schedule in concat(aws_scheduler_schedule.db_instance, values(aws_scheduler_schedule.db_cluster), values(aws_scheduler_schedule.other)) : schedule.name => schedule.schedule_expression }
}
