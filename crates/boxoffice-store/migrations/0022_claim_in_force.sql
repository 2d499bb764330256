-- Which claim (`sql/claim.sql`) is in force: its version and the checksum of its text, as
-- the server that last applied it recorded them. A server never applies a claim older
-- than the one in force: in a rolling upgrade, an old server that restarts would otherwise
-- put the old rules back over the new.
create table claim_in_force (
    one boolean primary key default true check (one),
    version integer not null,
    checksum text not null,
    applied_by text not null,
    applied_at timestamptz not null default now()
);

-- The refusal a claim once asked first for a seat refused lately: no server has called it
-- since the previous version, whose servers cannot start against this migration.
drop function if exists boxoffice_hold_refusal(uuid, text, text[], bigint, text);
