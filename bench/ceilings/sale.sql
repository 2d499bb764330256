-- One sale of a basket of 1 to 4 seats (as a flash sale's buyers want), as the postgres
-- store makes it: the hold, claimed alone by the claim in force (`boxoffice_claim_hold`,
-- asynchronous commit), then the checkout's transaction (synchronous commit): the hold's
-- rows reserved, the check that none is left, one statement for the offer check, the
-- order and its seats (`sales::orders::insert_order`), and the outbox row. Each sale takes
-- the next four seats of `sale_seat` (made by sale.sh in random order; the sequence steps
-- by four) and buys the first k, so every sale finds its seats free. Variables: event.
\set k random(1, 4)
SELECT nextval('sale_next') AS n, gen_random_uuid() AS token, gen_random_uuid() AS order_id \gset
\set last :n + :k - 1
SELECT array_agg(seat_id ORDER BY seat_id) AS seats FROM sale_seat WHERE n BETWEEN :n::bigint AND :last::bigint \gset
SELECT count(*) FROM boxoffice_claim_hold(:event::uuid, :token::uuid, 'buyer-' || :n::text, 600, :seats::text[], 4, NULL, NULL);
BEGIN;
UPDATE reservation SET status = 'R'
 WHERE event_id = :event::uuid AND hold_token = :token::uuid AND user_id = 'buyer-' || :n::text
   AND status = 'H' AND expires_at > statement_timestamp()
RETURNING seat_id, ticket_type, price_cents, pass_ticket;
SELECT count(*) FROM reservation WHERE event_id = :event::uuid AND hold_token = :token::uuid AND status = 'H';
WITH offer AS (
  UPDATE waitlist_entry SET status = 'B', ended_at = now()
   WHERE event_id = :event::uuid AND offer_token = :token::uuid AND status = 'O'
  RETURNING offer_expires_at > now() AS open
), placed AS (
  INSERT INTO ticket_order (event_id, order_id, user_id, hold_token, total_cents, currency, status, pay_by)
  SELECT :event::uuid, :order_id::uuid, 'buyer-' || :n::text, :token::uuid, 1000 * :k::bigint,
         (SELECT currency FROM ticket_type WHERE event_id = :event::uuid ORDER BY position LIMIT 1),
         'confirmed', NULL
   WHERE NOT EXISTS (SELECT 1 FROM offer WHERE NOT open)
  RETURNING currency, created_at, pay_by
), sold AS (
  INSERT INTO order_seat (event_id, order_id, seat_id, ticket_type, price_cents, released)
  SELECT :event::uuid, :order_id::uuid, s, 'standard', 1000, false
    FROM placed, unnest(:seats::text[]) AS s
)
SELECT (SELECT open FROM offer), placed.currency, placed.created_at, placed.pay_by
  FROM (SELECT) AS one LEFT JOIN placed ON true;
INSERT INTO outbox (event_id, topic, payload)
VALUES (:event::uuid, 'order.created',
        jsonb_build_object('order_id', :order_id::uuid, 'event_id', :event::uuid,
                           'user_id', 'buyer-' || :n::text, 'seats', to_jsonb(:seats::text[])));
COMMIT;
