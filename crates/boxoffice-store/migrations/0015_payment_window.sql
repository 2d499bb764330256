-- The payment window: an order keeps its seats while the buyer pays elsewhere.
--
-- * event.payment_window_seconds (0-86400, 0 the sale completes at checkout).
-- * ticket_order: 'pending_payment' (checked out, not paid; its seats held until pay_by)
--   and 'expired' (pay_by passed unpaid; the sweep records it, reads compose it before)
--   join 'confirmed' (paid; the API calls it `paid`) and 'cancelled'; pay_by, paid_at and
--   payment_reference.
-- * A pending order's seats are not sold: its order_seat rows are written released (the
--   unique index order_seat_sold does not count them) and flipped when it is paid, in the
--   payment's transaction. Until then the hold store keeps them: on postgres the hold's
--   reservation rows carry the order id as their token and expire at pay_by, so a seat
--   reads held until then and is taken over like any lapsed hold after; the payment
--   turns those rows 'R' only where they are still the order's and live, under their row
--   locks, so a payment and a takeover at the deadline cannot both happen.
-- * ticket_order_pending: the pending orders by deadline, for the sweep.

alter table event add column payment_window_seconds integer not null default 0
    constraint event_payment_window_seconds check (payment_window_seconds between 0 and 86400);

alter table ticket_order drop constraint ticket_order_status_check;
alter table ticket_order add constraint ticket_order_status_check
    check (status in ('confirmed', 'cancelled', 'pending_payment', 'expired'));
alter table ticket_order add column pay_by timestamptz;
alter table ticket_order add column paid_at timestamptz;
alter table ticket_order add column payment_reference text;

create index ticket_order_pending on ticket_order (pay_by) where status = 'pending_payment';
