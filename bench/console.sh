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
. bench/lib.sh
bench_build
driver_port=9517
out=target/bench/console-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
/usr/bin/chromedriver --port=$driver_port >"$out/chromedriver.log" 2>&1 &
driver=$!
trap 'kill $driver 2>/dev/null || true; bench_stop' EXIT
BOXOFFICE_HOLDS_PER_MINUTE=1000000 RUST_LOG=error \
  bench_serve boxoffice_console_$$ 3998 "$out/server.log"
python3 bench/console_follow.py $base $BENCH_ADMIN $driver_port "$follow" >"$out/follow.jsonl" &
follower=$!
sleep 2
bench_run "$out/sale.json" flash-sale --seats 20000 --buyers 5000 --queue 24000
jq -r '"sale: \(.figures.seats_sold) seats sold in \(.elapsed_seconds * 10 | round / 10) s = \(.figures.seats_sold_per_second | round)/s"' "$out/sale.json"
wait $follower
tail -n 1 "$out/follow.jsonl"
echo "files: $out"
