-- Local time: a venue's IANA time zone (default UTC) and an event's own, which overrides
-- its venue's (null: the venue's). Times stay UTC in the database and the API; the zone
-- says how every page, PDF and console screen shows them.
alter table venue add column time_zone text not null default 'UTC';
alter table event add column time_zone text;
