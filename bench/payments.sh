#!/usr/bin/env bash
# What the payment window costs: the load generator's flash sale (5,000 buyers, 20,000
# seats, all at once) without a window and with one of 600 s (each order then paid by the
# platform's server right after checkout), on the postgres store and on the redis store;
# then the expiry sweep with 100,000 pending orders past their deadline, timed by the
# server's own log line. A release server on a database of its own for each.
#   bench/payments.sh [--sweep-only]
# Needs psql, curl and jq; writes to target/bench/payments-<time>/.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
bench_build
out=target/bench/payments-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
db=boxoffice_payments_$$
serve() { # store, log
  BOXOFFICE_HOLDS_PER_MINUTE=1000000 RUST_LOG=info bench_serve $db 3997 "$2" \
    --hold-store "$1" --redis-url redis://127.0.0.1:6379
}
stores="postgres redis"
[[ ${1:-} == --sweep-only ]] && stores=""
for store in $stores; do
  for window in 0 600; do
    serve $store "$out/server-$store-$window.log"
    bench_run "$out/sale-$store-$window.json" \
      flash-sale --seats 20000 --buyers 5000 --payment-window $window
    jq -r --arg s $store --arg w $window '"\($s), window \($w) s: \(.figures.seats_sold) seats in \(.elapsed_seconds * 10 | round / 10) s = \(.figures.seats_sold_per_second | round)/s; " + ([.operations[] | "\(.name) p50 \(.latency_ms.p50) ms p99 \(.latency_ms.p99) ms"] | join("; "))' "$out/sale-$store-$window.json"
  done
done

# The expiry sweep: 100,000 pending orders of one seat each, all past their deadline,
# written in one statement; the server's sweep (every 5 s) records them and logs how long.
serve postgres "$out/server-expiry.log"
auth=(-H "authorization: Bearer $BENCH_ADMIN" -H "content-type: application/json")
venue=$(curl -sf "${auth[@]}" $base/v1/venues \
  -d '{"name": "Sweep", "sections": [{"id": "s", "name": "S", "rows": [{"label": "A", "seats": 1}]}]}' | jq -r .id)
event=$(curl -sf "${auth[@]}" $base/v1/events -d "{\"venue_id\": \"$venue\", \"name\": \"Sweep\",
  \"starts_at\": \"2099-01-01T20:00:00Z\", \"payment_window_seconds\": 600,
  \"ticket_types\": [{\"code\": \"t\", \"name\": \"T\", \"price_cents\": 1000, \"currency\": \"EUR\"}],
  \"allocations\": [{\"ticket_type\": \"t\", \"section\": \"s\"}]}" | jq -r .id)
psql -q -h 127.0.0.1 -U postgres -d $db -v event="$event" <<'SQL'
begin;
insert into ticket_order (event_id, order_id, user_id, hold_token, total_cents, currency, status, pay_by)
select :'event', gen_random_uuid(), 'sweeper-' || n, gen_random_uuid(), 1000, 'EUR', 'pending_payment',
       now() - interval '1 second'
  from generate_series(1, 100000) n;
insert into order_seat (event_id, order_id, seat_id, ticket_type, price_cents, released)
select event_id, order_id, 's-A-' || user_id, 't', 1000, true from ticket_order where event_id = :'event';
commit;
SQL
for _ in $(seq 120); do
  grep -q "recorded unpaid orders as expired" "$out/server-expiry.log" && break
  sleep 1
done
line=$(grep "recorded unpaid orders as expired" "$out/server-expiry.log" | head -n 1)
echo "expiry sweep of 100,000 pending orders: $line"
echo "files: $out"
