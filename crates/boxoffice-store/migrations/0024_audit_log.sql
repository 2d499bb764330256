-- The audit log: one entry per change made with a key, written in the change's own
-- transaction (a change rolled back leaves no entry, an entry never outlives its change).
-- Append-only down to Postgres: no server bug can rewrite what was done.
create table audit_entry (
    -- The order entries were written in: the cursor of the log, newest first.
    seq             bigint generated always as identity primary key,
    entry_id        uuid not null unique,
    at              timestamptz not null default now(),
    organization_id uuid not null references organization (organization_id),
    -- None for BOXOFFICE_ADMIN_TOKEN.
    actor_key_id    uuid,
    actor_key_name  text not null,
    actor_role      text not null,
    -- `<type>.<verb>`: event.created, key.revoked, …
    action          text not null,
    target_type     text not null,
    target_id       text not null,
    -- For an update each changed field as [before, after]; for a creation the fields set.
    -- Never a secret.
    changes         jsonb not null,
    request_id      text
);

create index audit_entry_by_organization on audit_entry (organization_id, seq desc);

create function audit_entry_refuses_rewrites() returns trigger
language plpgsql as $$
begin
    raise exception 'the audit log is append-only: % is refused', tg_op
        using errcode = 'insufficient_privilege';
end
$$;

create trigger audit_entry_append_only
    before update or delete on audit_entry
    for each row execute function audit_entry_refuses_rewrites();

create trigger audit_entry_never_truncated
    before truncate on audit_entry
    for each statement execute function audit_entry_refuses_rewrites();
