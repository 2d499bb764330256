-- Relays lease outbox rows instead of holding a transaction open while a webhook receiver
-- takes its time: a claim sets locked_until and commits; the row is delivered outside any
-- transaction and then marked. A relay that dies mid-delivery loses its lease when
-- locked_until passes, and another relay delivers the row again (at least once).
alter table outbox add column locked_until timestamptz;

-- Delivered rows are swept once they are older than the retention period, oldest first.
create index outbox_delivered on outbox (delivered_at) where delivered_at is not null;

-- Remembered answers are swept once they are older than the retention period.
create index idempotency_created on idempotency (created_at);
