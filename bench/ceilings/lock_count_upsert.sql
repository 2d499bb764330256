-- The hold transaction with the per-user limit: the user's advisory lock, the count of the
-- user's live holds, and the upsert, on a random seat of 100,000.
\set seat random(1, 100000)
\set usr random(1, 1000000)
BEGIN;
SELECT pg_advisory_xact_lock(hashtextextended('hold:3:' || :usr, 0));
INSERT INTO reservations (event_id, seat_id, user_id, status, holding_date)
SELECT 3, :seat, :usr, 'H', now()
WHERE (SELECT count(*) FROM (SELECT 1 FROM reservations r WHERE r.event_id = 3 AND r.user_id = :usr
        AND r.status = 'H' AND r.holding_date > now() - interval '30 seconds' LIMIT 2) s) < 2
ON CONFLICT (event_id, seat_id) DO UPDATE SET user_id = EXCLUDED.user_id, holding_date = EXCLUDED.holding_date
WHERE reservations.status = 'H' AND reservations.holding_date < now() - interval '30 seconds';
COMMIT;
