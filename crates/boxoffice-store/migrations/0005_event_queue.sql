-- An event's waiting room: while enabled, holds and bookings need a pass from it. The line
-- itself lives in Redis; these are its settings, one row per event that has a queue.
create table event_queue (
    event_id          uuid primary key references event (event_id) on delete cascade,
    enabled           boolean not null,
    opens_at          timestamptz not null,
    admit_per_minute  integer not null check (admit_per_minute between 1 and 1000000),
    session_seconds   integer not null check (session_seconds between 60 and 86400),
    shuffle_at_open   boolean not null
);
