-- Seasons: events of one venue sold together, the same seat for every event of a series.
-- A season has its own ticket types (a price per seat for the whole series), its own
-- allocations (which seats it sells; they change nothing in its events) and named partial
-- seasons over some of its events, at their own prices.

create table season (
    season_id  uuid primary key,
    venue_id   uuid not null references venue (venue_id),
    name       text not null,
    created_at timestamptz not null default now()
);

-- An event is in at most one season: the unique key on event_id says so whatever two
-- organizers create at once.
create table season_event (
    season_id uuid not null references season (season_id) on delete cascade,
    event_id  uuid not null references event (event_id),
    position  integer not null,
    primary key (season_id, event_id),
    constraint season_event_one_season unique (event_id)
);

create table season_ticket_type (
    season_id   uuid not null references season (season_id) on delete cascade,
    code        text not null,
    position    integer not null,
    name        text not null,
    price_cents bigint not null check (price_cents >= 0),
    currency    char(3) not null,
    primary key (season_id, code)
);

-- The seats the season sells, each at one of its ticket types. A seat no row names is not
-- sold by the season (its events may still sell it on their own).
create table season_allocation (
    season_id   uuid not null,
    seat_id     text not null,
    ticket_type text not null,
    primary key (season_id, seat_id),
    foreign key (season_id, ticket_type) references season_ticket_type (season_id, code)
        on delete cascade
);

create table season_partial (
    season_id uuid not null references season (season_id) on delete cascade,
    code      text not null,
    position  integer not null,
    name      text not null,
    primary key (season_id, code)
);

create table season_partial_event (
    season_id uuid not null,
    code      text not null,
    event_id  uuid not null,
    position  integer not null,
    primary key (season_id, code, event_id),
    foreign key (season_id, code) references season_partial (season_id, code)
        on delete cascade,
    foreign key (season_id, event_id) references season_event (season_id, event_id)
        on delete cascade
);

-- A partial's price for one of the season's ticket types, in place of the season's.
create table season_partial_price (
    season_id   uuid not null,
    code        text not null,
    ticket_type text not null,
    price_cents bigint not null check (price_cents >= 0),
    primary key (season_id, code, ticket_type),
    foreign key (season_id, code) references season_partial (season_id, code)
        on delete cascade,
    foreign key (season_id, ticket_type) references season_ticket_type (season_id, code)
        on delete cascade
);
