-- General admission (seed 002) and idempotent answers.

-- A booking takes places from ga_area.seats_left under that row's lock, in the same
-- transaction as this row and its outbox row.
create table ga_booking (
    event_id        uuid not null,
    booking_id      uuid not null,
    area            text not null,
    user_id         text not null,
    quantity        integer not null check (quantity > 0),
    total_cents     bigint not null check (total_cents >= 0),
    currency        char(3) not null,
    status          text not null default 'confirmed' check (status in ('confirmed', 'cancelled')),
    created_at      timestamptz not null default now(),
    cancelled_at    timestamptz,
    primary key (event_id, booking_id),
    foreign key (event_id, area) references ga_area (event_id, code) on delete cascade
);
create unique index ga_booking_booking_id on ga_booking (booking_id);

-- The first answer to a request that carried an Idempotency-Key, per user, so a repeat
-- gets that answer again. Written in the same transaction as the change it answers: a
-- request that did not commit leaves no answer behind. A concurrent repeat waits on the
-- primary key until the first request commits, then reads its answer.
create table idempotency (
    user_id     text not null,
    key         text not null,
    -- What the request asked for; a key reused for a different request is refused.
    fingerprint text not null,
    status      smallint not null,
    body        jsonb not null,
    created_at  timestamptz not null default now(),
    primary key (user_id, key)
);
