#!/usr/bin/env bash
# The console's dashboard following a flash sale: a release server, the load generator's
# flash sale (5,000 buyers, 20,000 seats, over 1,000 seats a second on this machine), and a
# headless Chromium on the event's dashboard (bench/console_follow.py over chromedriver)
# reading its sold counter, JS heap and DOM size twice a second against the server's count.
#   bench/console.sh [seconds to follow, default 40]
# Needs chromium, chromedriver, python3, curl; writes to target/bench/console-<time>/.
set -euo pipefail
cd "$(dirname "$0")/.."
follow=${1:-40}
cargo build --release -q --bin boxoffice
bin=target/release/boxoffice port=3998 base=http://127.0.0.1:3998 driver_port=9517
out=target/bench/console-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
db=boxoffice_console_$$
pids=()
stop() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  psql -q -h 127.0.0.1 -U postgres -c "drop database if exists $db with (force)" || true
}
trap stop EXIT
BOXOFFICE_HOLDS_PER_MINUTE=1000000 RUST_LOG=error $bin serve --bind 127.0.0.1:$port \
  --database-url "postgres://postgres@127.0.0.1:5432/$db" \
  --admin-token bench-admin --jwt-secret bench-secret >>"$out/server.log" 2>&1 &
pids+=($!)
/usr/bin/chromedriver --port=$driver_port >"$out/chromedriver.log" 2>&1 &
pids+=($!)
for _ in $(seq 200); do curl -sf $base/healthz >/dev/null && break; sleep 0.1; done
python3 bench/console_follow.py $base bench-admin $driver_port "$follow" >"$out/follow.jsonl" &
follower=$!
sleep 2
$bin bench --url $base --admin-token bench-admin --jwt-secret bench-secret --json \
  flash-sale --seats 20000 --buyers 5000 --queue 24000 >"$out/sale.json" || echo "a check of the sale failed" >&2
jq -r '"sale: \(.figures.seats_sold) seats sold in \(.elapsed_seconds * 10 | round / 10) s = \(.figures.seats_sold_per_second | round)/s"' "$out/sale.json"
wait $follower
tail -n 1 "$out/follow.jsonl"
echo "files: $out"
