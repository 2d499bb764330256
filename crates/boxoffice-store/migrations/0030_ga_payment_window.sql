-- A general-admission booking under the event's payment window, as an order is
-- (migration 0015):
--
-- * ga_booking: 'pending_payment' (booked, not paid: its places are taken from the area
--   until pay_by) and 'expired' (pay_by passed unpaid: its places are back in the area)
--   join 'confirmed' (paid; the API calls it `paid`) and 'cancelled'; pay_by, paid_at and
--   payment_reference.
-- * A pending booking has no tickets: they are issued when it is paid (the trigger below),
--   as a booking paid at once has them from its insert (migration 0027).
-- * Whoever returns a lapsed booking's places locks the area row first, then the
--   bookings: a booking, a payment, a cancellation and the sweep take turns on the area.
-- * ga_booking_pending: the pending bookings of an area by deadline, for the booking that
--   returns the lapsed ones under the area's lock, and for the sweep.

alter table ga_booking drop constraint ga_booking_status_check;
alter table ga_booking add constraint ga_booking_status_check
    check (status in ('confirmed', 'cancelled', 'pending_payment', 'expired'));
alter table ga_booking
    add column pay_by timestamptz,
    add column paid_at timestamptz,
    add column payment_reference text,
    add constraint ga_booking_pending_pays_by check (status <> 'pending_payment' or pay_by is not null);

create index ga_booking_pending on ga_booking (event_id, area, pay_by)
    where status = 'pending_payment';
create index ga_booking_pending_by_deadline on ga_booking (pay_by)
    where status = 'pending_payment';

create function ga_booking_paid_tickets_issued() returns trigger
language plpgsql as $$
begin
    insert into ga_ticket (event_id, ticket_id, booking_id, place, issued_at)
    select new.event_id, gen_random_uuid(), new.booking_id, n, now()
      from generate_series(1, new.quantity) as n;
    return null;
end
$$;

create trigger ga_booking_paid
    after update of status on ga_booking
    for each row when (old.status = 'pending_payment' and new.status = 'confirmed')
    execute function ga_booking_paid_tickets_issued();

-- A buyer's own orders and bookings (`GET /v1/me/orders`), newest first.
create index ticket_order_of_user on ticket_order (user_id, event_id, created_at);
create index ga_booking_of_user on ga_booking (user_id, event_id, created_at);
