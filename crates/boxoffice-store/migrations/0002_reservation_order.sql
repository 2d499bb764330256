-- What is held and what is sold. Availability reads both; holds and checkout write them.

-- The postgres hold store (seed 000): at most one row per (event, seat). A hold takes a
-- seat with one INSERT ... ON CONFLICT (event_id, seat_id) DO UPDATE ... WHERE the existing
-- row is a hold that has expired, so the primary key is what makes two live holds on one
-- seat impossible. Expiry is judged by Postgres time only.
create table reservation (
    event_id   uuid not null references event (event_id) on delete cascade,
    seat_id    text not null,
    hold_token uuid not null,
    user_id    text not null,
    -- 'H': held until expires_at. 'R': reserved by a checkout (sold until cancelled).
    status     char(1) not null check (status in ('H', 'R')),
    -- The seat's ticket type and price when it was held: what the buyer was quoted, and
    -- what checkout charges. (Allocation changes leave held seats alone.)
    ticket_type text not null,
    price_cents bigint not null,
    -- When the hold token was first granted: extensions are capped relative to this.
    created_at timestamptz not null,
    expires_at timestamptz not null,
    primary key (event_id, seat_id)
);
-- The per-user limit counts a user's live holds in an event through this index; the expiry
-- cutoff is in the query because a partial index cannot drop entries as time passes.
create index reservation_live_hold on reservation (event_id, user_id, expires_at) where status = 'H';
create index reservation_hold_token on reservation (event_id, hold_token);

create table ticket_order (
    event_id     uuid not null references event (event_id),
    order_id     uuid not null,
    user_id      text not null,
    hold_token   uuid not null,
    total_cents  bigint not null check (total_cents >= 0),
    currency     char(3) not null,
    status       text not null default 'confirmed' check (status in ('confirmed', 'cancelled')),
    created_at   timestamptz not null default now(),
    cancelled_at timestamptz,
    primary key (event_id, order_id),
    -- One order per hold token: a repeated checkout finds the first order instead of
    -- making a second one.
    constraint ticket_order_hold_token_key unique (event_id, hold_token)
);
create unique index ticket_order_order_id on ticket_order (order_id);

create table order_seat (
    event_id    uuid not null,
    order_id    uuid not null,
    seat_id     text not null,
    ticket_type text not null,
    price_cents bigint not null,
    -- Set when the order is cancelled: the seat is on sale again, the history stays.
    released    boolean not null default false,
    primary key (event_id, order_id, seat_id),
    foreign key (event_id, order_id) references ticket_order (event_id, order_id) on delete cascade
);
-- A seat is sold at most once per event, whatever any hold store says: the guarantee
-- everything else is a performance and UX layer on top of.
create unique index order_seat_sold on order_seat (event_id, seat_id) where not released;

-- Every order, cancellation and booking writes a row here in the same transaction as the
-- change itself, so nothing committed is ever missing from what downstream systems hear.
-- A relay delivers the rows at least once, in order per event, and marks them.
create table outbox (
    outbox_id       bigserial primary key,
    event_id        uuid not null,
    topic           text not null,
    payload         jsonb not null,
    created_at      timestamptz not null default now(),
    delivered_at    timestamptz,
    attempts        integer not null default 0,
    last_error      text,
    -- A failed delivery is tried again from this time on (exponential backoff).
    next_attempt_at timestamptz not null default now()
);
-- Pending rows per event in order: the relay's "oldest undelivered row of each event".
create index outbox_pending on outbox (event_id, outbox_id) where delivered_at is null;
