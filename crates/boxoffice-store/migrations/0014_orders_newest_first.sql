-- The organizer console pages an event's orders newest first, and its report counts the
-- seats sold a minute over the last hour: both read ticket_order by event and time.
create index ticket_order_by_time on ticket_order (event_id, created_at, order_id);
