#!/usr/bin/env bash
# The sale's ceiling on this machine, in two forms, each pgbench on 16 clients (the
# server's default pool), each on an event of its own of 200,000 seats made through this
# build's API (so the schema and the claim are this build's):
#   - sale.sql: the postgres store's own claim and checkout statements, one sale after
#     another (a hold of 1 to 4 seats, then its order), as the server makes a sale alone;
#   - sale_together.sql: sixteen sales at once, their claims in one call and their
#     checkouts in one commit, the form a sale could take with checkouts sent together.
# Every sale takes seats no one has, in random order: what it measures is the statements'
# cost, not contention. Appends a JSON line per form to <out.jsonl> (transactions and
# seats sold a second), as measure.sh does. SALE_PGBENCH_FLAGS adds pgbench flags (-r: each statement's latency),
# SALE_PGBENCH_OUT keeps pgbench's report.
#
#   bench/ceilings/sale.sh <seconds> <out.jsonl>     ($bin: the build, or it is built)
#
# Needs pgbench, psql, curl and jq; Postgres on 127.0.0.1:5432 (user postgres, trust).
# Leaves no database behind.
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/lib.sh
secs=$1 out=$2
[[ -x $bin ]] || bench_build
db=bench_sale_ceiling
log=$(mktemp)
trap 'bench_stop; rm -f "$log"' EXIT
bench_serve "$db" 3997 "$log"
post() { # path body
  curl -fsS -X POST -H "authorization: Bearer $BENCH_ADMIN" -H 'content-type: application/json' \
    "$base$1" -d "$2"
}
venue=$(post /v1/venues "$(jq -nc '{name: "Sale ceiling", sections: [{id: "floor", name: "Floor",
  rows: [range(200) | {label: "R\(.)", seats: 1000}]}]}')" | jq -r .id)
new_event() {
  post /v1/events "$(jq -nc --arg venue "$venue" '{venue_id: $venue, name: "Sale ceiling",
    starts_at: "2099-01-01T20:00:00Z", max_seats_per_user: 4,
    ticket_types: [{code: "standard", name: "Standard", price_cents: 1000, currency: "EUR"}],
    allocations: [{ticket_type: "standard", section: "floor"}]}')" | jq -r .id
}
# The together form sells over 10,000 seats a second: an event each, so neither runs out.
event=$(new_event) together_event=$(new_event)
# The server goes; its database stays until the end.
kill "$server"
wait "$server" 2>/dev/null || true
server=
psql "${bench_pg[@]}" -q -d "$db" \
  -c "create table sale_seat (n bigint primary key, seat_id text not null)" \
  -c "insert into sale_seat select row_number() over (order by random()), seat_id
        from seat_allocation where event_id = '$event'" \
  -c "create sequence sale_next increment by 4 maxvalue 200000" \
  -c "create sequence together_next increment by 64 maxvalue 199937" -c "analyze"
# One form of the sale: its pgbench script, for $secs; one JSON line.
form() { # name script event
  local sold_before sold tps seats
  sold_before=$(psql "${bench_pg[@]}" -Atq -d "$db" -c "select count(*) from order_seat")
  bench_settle
  tps=$(pgbench "${bench_pg[@]}" ${SALE_PGBENCH_FLAGS:-} -n -M prepared -c 16 -j 2 -T "$secs" \
    -D "event=$3" -f "bench/ceilings/$2" "$db" 2>"$log.pgbench" |
    tee -a "${SALE_PGBENCH_OUT:-/dev/null}" | sed -n 's/^tps = \([0-9.]*\).*/\1/p') || true
  if ! awk -v t="${tps:-0}" 'BEGIN { exit !(t > 0) }'; then
    cat "$log.pgbench" >&2
    echo "pgbench sold nothing ($1)" >&2
    exit 1
  fi
  rm -f "$log.pgbench"
  sold=$(psql "${bench_pg[@]}" -Atq -d "$db" -c "select count(*) - $sold_before from order_seat")
  seats=$(awk -v s="$sold" -v t="$secs" 'BEGIN { printf "%.1f", s / t }')
  echo "{\"name\": \"pgbench $1\", \"per_second\": $tps, \"seats_per_second\": $seats}" >>"$out"
}
form "sale (claim, then checkout)" sale.sql "$event"
form "sales together (16 claims a call, 16 checkouts a commit)" sale_together.sql "$together_event"
