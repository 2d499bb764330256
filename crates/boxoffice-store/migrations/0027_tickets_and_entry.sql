-- Tickets and entry. A ticket is not written by the sale: a seat's ticket is its sold
-- `order_seat` row (its id a column of that row), a GA place's is a `ga_ticket` row that a
-- trigger writes with the booking; its secret is signed when it is read, by the entry key
-- that was signing when the ticket was issued, so it is the same on every read.

-- An organization's entry keys (Ed25519): one signs at a time, earlier ones still check
-- the tickets they signed. Every change moves key_generation, so each server reloads them
-- with the keys.
create table entry_key (
    kid             text primary key check (kid ~ '^[A-Za-z0-9_-]{1,64}$'),
    organization_id uuid not null references organization (organization_id),
    -- The 32-byte seed of the signing key, and its public half.
    private_key     bytea not null check (length(private_key) = 32),
    public_key      bytea not null check (length(public_key) = 32),
    created_at      timestamptz not null default now(),
    retired_at      timestamptz
);
create unique index entry_key_signing on entry_key (organization_id) where retired_at is null;

create trigger entry_key_changed
    after insert or delete or update of retired_at on entry_key
    for each statement execute function api_key_moves_generation();

-- A seat's ticket: reissued (a new id, issued now) whenever a released row is sold again
-- (a payment, a night taken back); `issued_at` null is the order's time.
alter table order_seat add column ticket_id uuid not null default gen_random_uuid();
alter table order_seat add column issued_at timestamptz;
create index order_seat_ticket on order_seat (ticket_id);

-- A GA place's ticket, place 1 to the booking's quantity.
create table ga_ticket (
    event_id   uuid not null,
    ticket_id  uuid not null,
    booking_id uuid not null,
    place      integer not null check (place > 0),
    issued_at  timestamptz not null,
    primary key (event_id, ticket_id),
    foreign key (event_id, booking_id) references ga_booking (event_id, booking_id) on delete cascade
);
create index ga_ticket_of_booking on ga_ticket (booking_id, place);
create index ga_ticket_by_id on ga_ticket (ticket_id);

insert into ga_ticket (event_id, ticket_id, booking_id, place, issued_at)
select b.event_id, gen_random_uuid(), b.booking_id, n, b.created_at
  from ga_booking b, generate_series(1, b.quantity) as n
 where b.status = 'confirmed';

-- Tickets that no longer let anyone in, for scanners that work offline.
create table revoked_ticket (
    event_id   uuid not null,
    ticket_id  uuid not null,
    revoked_at timestamptz not null default now(),
    primary key (event_id, ticket_id)
);
create index revoked_ticket_since on revoked_ticket (event_id, revoked_at);

insert into revoked_ticket (event_id, ticket_id, revoked_at)
select s.event_id, s.ticket_id, coalesce(o.cancelled_at, now())
  from order_seat s
  join ticket_order o using (event_id, order_id)
 where s.released and o.status = 'cancelled' and (o.pay_by is null or o.paid_at is not null);

create function order_seat_ticket_issued() returns trigger
language plpgsql as $$
begin
    new.ticket_id := gen_random_uuid();
    new.issued_at := now();
    return new;
end
$$;

create function order_seat_ticket_revoked() returns trigger
language plpgsql as $$
begin
    insert into revoked_ticket (event_id, ticket_id) values (old.event_id, old.ticket_id)
    on conflict do nothing;
    return null;
end
$$;

create trigger order_seat_sold_again
    before update of released on order_seat
    for each row when (old.released and not new.released)
    execute function order_seat_ticket_issued();

create trigger order_seat_released
    after update of released on order_seat
    for each row when (not old.released and new.released)
    execute function order_seat_ticket_revoked();

create function ga_booking_tickets_issued() returns trigger
language plpgsql as $$
begin
    insert into ga_ticket (event_id, ticket_id, booking_id, place, issued_at)
    select new.event_id, gen_random_uuid(), new.booking_id, n, new.created_at
      from generate_series(1, new.quantity) as n;
    return null;
end
$$;

create function ga_booking_tickets_revoked() returns trigger
language plpgsql as $$
begin
    insert into revoked_ticket (event_id, ticket_id)
    select event_id, ticket_id from ga_ticket
     where event_id = new.event_id and booking_id = new.booking_id
    on conflict do nothing;
    return null;
end
$$;

create trigger ga_booking_booked
    after insert on ga_booking
    for each row when (new.status = 'confirmed')
    execute function ga_booking_tickets_issued();

create trigger ga_booking_cancelled
    after update of status on ga_booking
    for each row when (old.status = 'confirmed' and new.status = 'cancelled')
    execute function ga_booking_tickets_revoked();

-- Whether a ticket that went out may come in again.
alter table event add column entry_reentry boolean not null default false;

-- Each ticket let in: the first entry, and whether it is inside now. One row per ticket,
-- taken by its primary key, is what lets a ticket in exactly once however many scanners
-- scan it at once.
create table ticket_entry (
    event_id   uuid not null,
    ticket_id  uuid not null,
    inside     boolean not null,
    first_at   timestamptz not null,
    first_gate text,
    primary key (event_id, ticket_id)
);

-- Every scan that let someone in or out, or an offline scanner's upload of one.
create table checkin (
    event_id   uuid not null,
    checkin_id uuid not null,
    ticket_id  uuid not null,
    -- The scanner's own id for the scan: the same nonce again is answered the same.
    nonce      text not null check (length(nonce) between 1 and 64),
    kind       text not null check (kind in ('entry', 'exit')),
    gate       text check (length(gate) <= 64),
    -- 'duplicate': an offline scanner let in a ticket that was in already.
    result     text not null check (result in ('ok', 'duplicate')),
    forced     boolean not null default false,
    scanned_at timestamptz not null,
    created_at timestamptz not null default now(),
    key_id     uuid,
    primary key (event_id, checkin_id),
    constraint checkin_nonce unique (event_id, nonce)
);
create index checkin_of_ticket on checkin (event_id, ticket_id, created_at);
