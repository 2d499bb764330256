-- Sixteen sales at once, each a basket of 1 to 4 seats: the sale as it could be made with
-- claims sent together and checkouts committed together. The claims go in one call of
-- `boxoffice_claim_holds` (as the postgres store's lanes send them; asynchronous commit),
-- the sixteen checkouts in one transaction (synchronous commit): the holds' rows reserved,
-- the offer check, the orders, their seats and their outbox rows, a statement each for
-- all of them. Each batch takes the next 64 seats of `sale_seat` from `together_next` (made
-- by sale.sh), four for each sale, of which it buys the first k. Variables: event.
SELECT nextval('together_next') AS b \gset
SELECT array_agg(token ORDER BY i)::text AS tokens, array_agg(k ORDER BY i)::text AS ks
  FROM (SELECT i, gen_random_uuid() AS token, 1 + floor(random() * 4)::int AS k
          FROM generate_series(1, 16) AS i) AS sales \gset
SELECT array_agg(s.i::int ORDER BY s.i, ss.seat_id)::text AS baskets,
       array_agg(ss.seat_id ORDER BY s.i, ss.seat_id)::text AS seats
  FROM unnest(:ks::int[]) WITH ORDINALITY AS s(k, i)
  JOIN sale_seat ss ON ss.n BETWEEN :b::bigint + 4 * (s.i - 1) AND :b::bigint + 4 * (s.i - 1) + s.k - 1 \gset
SELECT count(*) FROM boxoffice_claim_holds(
  array_fill(:event::uuid, ARRAY[16]), :tokens::uuid[],
  (SELECT array_agg('buyer-' || t ORDER BY o) FROM unnest(:tokens::uuid[]) WITH ORDINALITY AS u(t, o)),
  array_fill(600::float8, ARRAY[16]), array_fill(4::bigint, ARRAY[16]),
  array_fill(NULL::uuid, ARRAY[16]), array_fill(NULL::text, ARRAY[16]),
  :baskets::int[], :seats::text[]);
BEGIN;
UPDATE reservation SET status = 'R'
 WHERE event_id = :event::uuid AND hold_token = ANY (:tokens::uuid[])
   AND status = 'H' AND expires_at > statement_timestamp()
RETURNING hold_token, seat_id, ticket_type, price_cents, pass_ticket;
SELECT hold_token, count(*) FROM reservation
 WHERE event_id = :event::uuid AND hold_token = ANY (:tokens::uuid[]) AND status = 'H'
 GROUP BY hold_token;
UPDATE waitlist_entry SET status = 'B', ended_at = now()
 WHERE event_id = :event::uuid AND offer_token = ANY (:tokens::uuid[]) AND status = 'O'
RETURNING offer_token, offer_expires_at > now();
WITH o AS (
  INSERT INTO ticket_order (event_id, order_id, user_id, hold_token, total_cents, currency, status, pay_by)
  SELECT :event::uuid, gen_random_uuid(), 'buyer-' || t, t, 1000 * k, 'EUR', 'confirmed', NULL
    FROM unnest(:tokens::uuid[], :ks::int[]) AS u(t, k)
  RETURNING order_id, hold_token, user_id, created_at)
INSERT INTO order_seat (event_id, order_id, seat_id, ticket_type, price_cents, released)
SELECT :event::uuid, o.order_id, r.seat_id, r.ticket_type, r.price_cents, false
  FROM o JOIN reservation r ON r.event_id = :event::uuid AND r.hold_token = o.hold_token;
INSERT INTO outbox (event_id, topic, payload)
SELECT :event::uuid, 'order.created',
       jsonb_build_object('order_id', o.order_id, 'event_id', o.event_id, 'user_id', o.user_id,
                          'seats', (SELECT jsonb_agg(s.seat_id) FROM order_seat s
                                     WHERE s.event_id = o.event_id AND s.order_id = o.order_id))
  FROM ticket_order o WHERE o.event_id = :event::uuid AND o.hold_token = ANY (:tokens::uuid[]);
COMMIT;
