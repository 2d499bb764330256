-- Season orders: a season hold bought, its seats sold in every event covered in one
-- transaction. The buyer's order is a `season_order` row; in each covered event the seats
-- are an ordinary `ticket_order` of that event (its `season_order_id` set) with its
-- `order_seat` rows, so the unique index `order_seat_sold` still guarantees that no
-- event-seat is sold twice, season or not. A season seat's price is split over the events
-- (the parts sum to it), so each event's sales count its share.
--
-- Released for one night: that event's `ticket_order` is cancelled with `released_at` set
-- (its seats on sale again in that event alone) while the season order and its other
-- events stand.

create table season_order (
    season_order_id uuid primary key,
    season_id       uuid not null references season (season_id),
    user_id         text not null,
    hold_token      uuid not null,
    partial         text,
    total_cents     bigint not null check (total_cents >= 0),
    currency        char(3) not null,
    status          text not null default 'confirmed'
                    check (status in ('confirmed', 'cancelled')),
    created_at      timestamptz not null default now(),
    cancelled_at    timestamptz,
    -- One order per season hold: a repeated checkout finds the first order.
    constraint season_order_hold_token_key unique (season_id, hold_token)
);
create index season_order_by_time on season_order (season_id, created_at, season_order_id);

-- Written in the same transaction as the season order it names (no foreign key: event
-- tables reach a global table only by id, docs/scaling.md).
alter table ticket_order add column season_order_id uuid;
alter table ticket_order add column released_at timestamptz;
create index ticket_order_of_season on ticket_order (season_order_id)
    where season_order_id is not null;
