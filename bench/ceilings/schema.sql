-- The bare hold table of the design notes (docs/design/holds-in-postgres.md): one row per
-- held or reserved seat.
CREATE TABLE reservations (
  event_id bigint NOT NULL, seat_id bigint NOT NULL, user_id bigint NOT NULL,
  status char(1) NOT NULL, holding_date timestamptz NOT NULL,
  PRIMARY KEY (event_id, seat_id));
CREATE INDEX live_holds ON reservations (event_id, user_id, holding_date) WHERE status = 'H';
