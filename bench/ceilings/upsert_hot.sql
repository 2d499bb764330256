-- The hold upsert alone, every transaction on the same seat.
\set usr random(1, 1000000)
INSERT INTO reservations (event_id, seat_id, user_id, status, holding_date)
VALUES (2, 1, :usr, 'H', now())
ON CONFLICT (event_id, seat_id) DO UPDATE SET user_id = EXCLUDED.user_id, holding_date = EXCLUDED.holding_date
WHERE reservations.status = 'H' AND reservations.holding_date < now() - interval '30 seconds';
