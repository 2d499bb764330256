-- A season hold keeps each event's waiting-room pass, as an event's hold does: the season's
-- claim takes the passes (`p_passes`, one per event). `create or replace` cannot change a
-- function's arguments, so the claim of eight arguments goes here; `sql/claim.sql`, applied
-- after the migrations at every start, defines the claim of nine.
drop function if exists boxoffice_claim_season(uuid, uuid[], uuid[], text, double precision,
                                               bigint[], text[], text);
