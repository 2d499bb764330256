#!/usr/bin/env bash
# The ceilings and the hold figures of BENCHMARKS.md on this machine, side by side in one
# window (the other scenarios have scripts of their own, named in BENCHMARKS.md):
#   1. the bare stores' ceilings: pgbench on the bare hold statements (the upsert alone on a
#      random seat and on one hot seat, and the transaction with the user's advisory lock
#      and the count; synchronous commit on and off) and redis-benchmark on the bare basket
#      acquire script (random seats, one hot seat); the sale's ceiling (sale.sh: the
#      postgres store's claim and checkout statements, one sale after another and sixteen
#      at once); after each
#      store's closed-loop runs, that store's own hold statement with no server in front
#      (service_alone.sh);
#   2. the server's HTTP floor (GET /healthz);
#   3. the service on the postgres store, then on the redis store (with the sale-day gate
#      in front of general admission): `boxoffice bench` holds at rising concurrency on
#      100,000 random seats and on one hot seat, 2,000 buyers released on one seat, a
#      flash sale (and the same behind a waiting room), the waiting room itself, seat-map
#      loads (plain, compressed, and as the page loads it, first and
#      again), a GA rush and live subscribers.
# Writes every report as JSON, a summary table (summary.md) with each service figure as a
# share of its store's ceiling, and the plot (holds.svg) to target/bench/<time>/.
#   bench/run.sh [--quick]      (--quick: shorter runs, fewer levels; for trying it out)
# Needs pgbench, redis-benchmark, psql, curl and jq, Postgres on 127.0.0.1:5432 (user
# postgres, trust) and Redis on 127.0.0.1:6379. Leaves no database or server behind.
set -euo pipefail
cd "$(dirname "$0")/.."

secs=10 levels="1 4 16 64 256" subscribers=10000 fans=5000 sale_seats=20000 rush=10000
if [[ ${1:-} == --quick ]]; then
  secs=3 levels="1 16 64" subscribers=1000 fans=1000 sale_seats=4000 rush=2000
fi
for tool in pgbench redis-benchmark redis-cli psql curl jq; do
  command -v $tool >/dev/null || { echo "bench/run.sh needs $tool" >&2; exit 1; }
done
pg=(-h 127.0.0.1 -U postgres)
out=target/bench/$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
. bench/lib.sh
bench_build
log() { printf '== %s\n' "$*" >&2; }
# Let the WAL written by the previous step reach the disk before the next is measured.
settle() { psql "${pg[@]}" -qc checkpoint; sleep 3; }

# 1. The ceilings.
log "ceilings: pgbench and redis-benchmark"
ceilings=$out/ceilings.jsonl
bench/ceilings/measure.sh "$secs" "$ceilings"
bench/ceilings/sale.sh "$secs" "$ceilings"

# 2 and 3. The service on each store.
port=3997
for store in postgres redis; do
  db=boxoffice_bench_${store}_$$
  gate=false
  [[ $store == redis ]] && gate=true
  log "service on the $store store"
  start() {
    BOXOFFICE_HOLD_STORE=$store BOXOFFICE_GA_GATE=$gate BOXOFFICE_HOLDS_PER_MINUTE=1000000 \
      BOXOFFICE_MAX_CONNECTIONS=$((subscribers + 5000)) RUST_LOG=warn \
      bench_serve "$db" $port "$out/server-$store.log"
  }
  stop() { bench_stop; }
  start
  run() {
    local name=$1
    shift
    bench_run "$out/$store-$name.json" --label "$store" "$@"
  }
  if [[ $store == postgres ]]; then
    settle
    run floor floor --duration "${secs}s" --workers 64
  fi
  for workers in $levels; do
    settle
    run "holds-w$workers" holds --seats 100000 --workers "$workers" --duration "${secs}s"
    settle
    run "hot-w$workers" holds --seats 1 --workers "$workers" --duration "${secs}s"
  done
  # The store's own hold statement with no server in front (the server idles meanwhile):
  # what part of the gap to the bare ceiling is the store's work.
  settle
  bench/ceilings/service_alone.sh "$store" "$secs" "$db" "$ceilings" ||
    log "$store: the hold statement alone was not measured"
  settle
  run hot-seat hot-seat --buyers 2000
  settle
  run hot-seat-connected hot-seat --buyers 2000 --connected
  settle
  run flash-sale flash-sale --seats "$sale_seats" --buyers "$fans"
  settle
  # The same sale behind a waiting room: buyers think 3 s between hold and checkout, and the
  # line admits what the store holds with a p99 under 100 ms on this machine.
  if [[ $store == postgres ]]; then admit=6000; else admit=12000; fi
  run flash-sale-queue flash-sale --seats "$sale_seats" --buyers "$fans" --think 3s \
    --queue "$admit" --time-limit 300s
  settle
  run queue queue --buyers "$fans" --admit-per-minute 6000 --duration "${secs}s"
  settle
  run seat-map seat-map --seats 100000 --workers 4 --duration "${secs}s"
  run seat-map-compressed seat-map --seats 100000 --workers 4 --duration "${secs}s" --compressed
  # As the page loads it: the layout (compressed), then the statuses from the stream; a
  # repeat load revalidates the layout.
  run page-load seat-map --seats 100000 --workers 4 --duration "${secs}s" --compressed --page
  run page-reload seat-map --seats 100000 --workers 4 --duration "${secs}s" --compressed --page --revalidate
  settle
  run ga-rush ga-rush --places $((rush / 2)) --buyers "$rush"
  # On an instance of its own: the memory a stream costs, not that of the seat maps the
  # runs before left cached.
  stop
  start
  run browse browse --subscribers "$subscribers" --server-pid "$server"
  stop
done

# The summary: each figure beside its ceiling.
ceiling() { jq -rs --arg n "$1" 'map(select(.name == $n))[0].per_second' "$ceilings"; }
best() { # the fastest of a store's closed-loop runs of one kind: "per_second p99 workers"
  jq -rs 'max_by(.operations[0].per_second) |
    "\(.operations[0].per_second) \(.operations[0].latency_ms.p99) \(.parameters.workers)"' "$@"
}
share() { jq -rn --argjson a "$1" --argjson b "$2" '($a / $b * 100 | round | tostring) + "%"'; }
# One row of the table: what, unit, report prefix, ceiling name, ceiling label, its unit.
row() {
  local rate p99 w c
  read -r rate p99 w < <(best "$out"/"$3"-w*.json)
  c=$(ceiling "$4")
  echo "| $1 ($w workers) | $(printf %.0f "$rate") $2/s | $(printf %.1f "$p99") ms | $5: $(printf %.0f "$c")$6 | $(share "$rate" "$c") |"
}
{
  echo "| | service | p99 | bare store, same window | share |"
  echo "|---|---|---|---|---|"
  row "postgres store, random seats" holds postgres-holds "pgbench lock_count_upsert, synchronous_commit off" "lock + count + upsert, synchronous commit off" " tx/s"
  row "postgres store, one hot seat" requests postgres-hot "pgbench upsert_hot, synchronous_commit off" "hot upsert, synchronous commit off" " tx/s"
  row "redis store, random seats" holds redis-holds "redis-benchmark acquire, spread" "acquire script" /s
  row "redis store, one hot seat" requests redis-hot "redis-benchmark acquire, hot" "acquire script, one key" /s
  for alone in "pgbench boxoffice_claim_hold, one random seat|pgbench lock_count_upsert, synchronous_commit off" \
    "pgbench boxoffice_claim_holds, 32 random seats a call|pgbench lock_count_upsert, synchronous_commit off" \
    "redis-benchmark hold_acquire, one random seat|redis-benchmark acquire, spread"; do
    c=$(ceiling "${alone%%|*}")
    [[ $c == null ]] || echo "| ${alone%%|*} (no server) | $(printf %.0f "$c")/s | | ${alone#*|}: $(printf %.0f "$(ceiling "${alone#*|}")")/s | $(share "$c" "$(ceiling "${alone#*|}")") |"
  done
  sale=$(jq -rs 'map(select(.name == "pgbench sales together (16 claims a call, 16 checkouts a commit)"))[0].seats_per_second' "$ceilings")
  for store in postgres redis; do
    jq -r --arg s "$store" --argjson c "$sale" '"| \($s) store, flash sale (\(.parameters.buyers) buyers at once) | \(.figures.seats_sold_per_second | round) seats sold/s | \(.operations | map(select(.name | startswith("hold"))) | first | .latency_ms.p99) ms (holds) | sale ceiling (sales together): \($c | round) seats/s | \(.figures.seats_sold_per_second / $c * 100 | round)% |"' "$out/$store-flash-sale.json"
  done
  jq -r '"| GET /healthz (HTTP floor, 64 workers) | \(.operations[0].per_second | round) requests/s | \(.operations[0].latency_ms.p99) ms | | |"' "$out/postgres-floor.json"
  echo
  echo "| store | scenario | figures | p99 | checks |"
  echo "|---|---|---|---|---|"
  for store in postgres redis; do
    for name in hot-seat hot-seat-connected flash-sale flash-sale-queue queue ga-rush seat-map seat-map-compressed page-load page-reload browse; do
      jq -r --arg s "$store" '"| \($s) | \(.scenario) \(.parameters | del(.label) | to_entries | map("\(.key)=\(.value)") | join(" ")) | \(.figures | to_entries | map("\(.key) \(.value * 10 | round / 10)") | join(", ")) | \(.operations | map("\(.name) \(.latency_ms.p99) ms") | join(", ")) | \(if all(.checks[]; .passed) then "all passed" else "FAILED: " + (.checks | map(select(.passed | not) | .name) | join("; ")) end) |"' "$out/$store-$name.json"
    done
  done
  echo
  echo "Ceilings, same window:"
  jq -r '"- \(.name): \(.per_second | round)/s"' "$ceilings"
} >"$out/summary.md"
$bin bench plot --out "$out/holds.svg" "$out"/*-holds-w*.json "$out"/*-hot-w*.json >/dev/null
cat "$out/summary.md"
log "reports, summary.md and holds.svg in $out"
