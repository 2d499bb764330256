-- A payment window that lapses feeds the waiting list.
--
-- At pay_by an unpaid order's seats would read available at once (0015): composed at read
-- time, before any server could hand them to a waiting buyer. So shortly before pay_by
-- the expiry sweep keeps the seats of pending orders in events where anyone waits held a
-- little longer (until kept_until), and after pay_by passes them to the waiting list in
-- one transaction, as a cancellation does. The payment is still refused from pay_by on:
-- it reads the order's pay_by, not the seats'.
--
-- * ticket_order.kept_until: set (under the order's row lock) when the sweep kept the
--   order's seats past pay_by; null for every other order.

alter table ticket_order add column kept_until timestamptz;
