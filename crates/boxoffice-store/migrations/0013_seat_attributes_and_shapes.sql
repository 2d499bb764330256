-- Venues as they are: seats carry the venue's price zone (category), whether they are a
-- wheelchair space, a companion seat beside one, or have a restricted view, and the id an
-- outside plan gave them (a pretix seat_guid); a venue carries the shapes drawn behind its
-- seats (a stage, labels, areas). Added with defaults, so existing rows need no rewrite.

alter table seat
    add column category        text,
    add column accessible      boolean not null default false,
    add column companion       boolean not null default false,
    add column restricted_view boolean not null default false,
    add column external_id     text;

-- The shapes as the domain crate validated them: a JSON array read and written whole.
alter table venue
    add column shapes jsonb not null default '[]';
