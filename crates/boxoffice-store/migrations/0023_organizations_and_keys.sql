-- Organizations: one installation serves many organizers. Every venue, event and season
-- belongs to one; what hangs off an event (its orders, bookings, channels, holds) belongs
-- to the event's. The data from before organizations is the organization `default`, whose
-- id is fixed so the server knows it without asking.
create table organization (
    organization_id uuid primary key,
    name            text not null check (length(name) between 1 and 200),
    slug            text not null unique check (slug ~ '^[a-z0-9-]{1,40}$'),
    created_at      timestamptz not null default now()
);

insert into organization (organization_id, name, slug)
values ('00000000-0000-0000-0000-000000000001', 'Default', 'default');

alter table venue
    add column organization_id uuid not null default '00000000-0000-0000-0000-000000000001'
        references organization (organization_id);
alter table event
    add column organization_id uuid not null default '00000000-0000-0000-0000-000000000001'
        references organization (organization_id);
alter table season
    add column organization_id uuid not null default '00000000-0000-0000-0000-000000000001'
        references organization (organization_id);

create index venue_by_organization on venue (organization_id, created_at);
create index event_by_organization on event (organization_id, starts_at);
create index season_by_organization on season (organization_id, created_at);

-- Keys staff and servers call with: `bxk_` and 32 random bytes, kept only as their SHA-256.
create table api_key (
    key_id          uuid primary key,
    organization_id uuid not null references organization (organization_id),
    name            text not null check (length(name) between 1 and 100),
    role            text not null check (role in ('platform', 'admin', 'sales', 'checkin', 'reports')),
    -- The first eight characters after `bxk_`, to tell keys apart in a list.
    prefix          text not null,
    hash            bytea not null unique check (length(hash) = 32),
    created_at      timestamptz not null default now(),
    expires_at      timestamptz,
    revoked_at      timestamptz,
    last_used_at    timestamptz
);

create index api_key_by_organization on api_key (organization_id, created_at);

-- Bumped by every change to the keys, so each server reloads them when it changes (it asks
-- several times a second) and a revocation is seen everywhere within a second.
create table key_generation (
    one        boolean primary key default true check (one),
    generation bigint not null
);

insert into key_generation (generation) values (1);

create function api_key_moves_generation() returns trigger
language plpgsql as $$
begin
    update key_generation set generation = generation + 1;
    return null;
end
$$;

-- Not on `last_used_at` alone: using a key changes nothing any server holds.
create trigger api_key_changed
    after insert or delete or update of role, name, expires_at, revoked_at on api_key
    for each statement execute function api_key_moves_generation();
