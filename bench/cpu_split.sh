#!/usr/bin/env bash
# Where a flash sale's CPU goes on this machine: the server, Postgres (every backend) and
# the load generator, in CPU seconds over the sale, and the server's own time in the hold
# store and in checkouts (its duration histograms' sums). One server with its defaults on a
# fresh database; the sale is `boxoffice bench flash-sale --seats <seats> --buyers <buyers>`.
#   bench/cpu_split.sh [buyers] [seats] [store]     (defaults: 5000 20000 postgres)
# With $bin set, that build is measured; else this tree's release build (built first).
# Needs psql, curl and jq.
set -euo pipefail
cd "$(dirname "$0")/.."
buyers=${1:-5000} seats=${2:-20000} store=${3:-postgres}
given=${bin:-}
. bench/lib.sh
[[ -n $given ]] || bench_build
out=target/bench/cpu-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
BOXOFFICE_HOLD_STORE=$store BOXOFFICE_HOLDS_PER_MINUTE=1000000 RUST_LOG=error \
  bench_serve boxoffice_cpu_split_$$ 3995 "$out/server.log"
bench_settle
ticks=$(getconf CLK_TCK)
# CPU seconds (user + system) of the processes named $1 (every one of them, summed).
cpu_of() {
  local pid sum=0 t
  for pid in $(pgrep -x "$1"); do
    t=$(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null) || continue
    sum=$((sum + t))
  done
  echo "$sum"
}
server_before=$(awk '{print $14 + $15}' "/proc/$server/stat")
pg_before=$(cpu_of postgres)
"$bin" bench --url "$base" --admin-token "$BENCH_ADMIN" --jwt-secret "$BENCH_SECRET" \
  --json flash-sale --seats "$seats" --buyers "$buyers" >"$out/sale.json" &
sale=$!
# The load generator's own CPU, read just before it exits (it is gone after).
loadgen=0
while kill -0 "$sale" 2>/dev/null; do
  t=$(awk '{print $14 + $15}' "/proc/$sale/stat" 2>/dev/null) || break
  loadgen=$t
  sleep 0.2
done
wait "$sale" || echo "a check of the sale failed" >&2
server_after=$(awk '{print $14 + $15}' "/proc/$server/stat")
pg_after=$(cpu_of postgres)
metrics=$(curl -s "$base/metrics")
secs() { awk -v t="$1" -v k="$ticks" 'BEGIN { printf "%.1f", t / k }'; }
sum_of() { awk -v m="$1" '$1 ~ "^"m"_sum" {n += $2} END {printf "%.1f", n}' <<<"$metrics"; }
jq -r --arg server "$(secs $((server_after - server_before)))" \
  --arg pg "$(secs $((pg_after - pg_before)))" --arg loadgen "$(secs "$loadgen")" \
  --arg holds "$(sum_of boxoffice_hold_duration_seconds)" \
  --arg checkouts "$(sum_of boxoffice_checkout_duration_seconds)" '
  "sale: \(.elapsed_seconds * 10 | round / 10) s, \(.figures.seats_sold_per_second | round) seats/s, holds \(.operations[0].statuses), checkouts \(.operations[1].statuses)",
  "CPU seconds: server \($server), postgres \($pg), load generator \($loadgen)",
  "server time in the hold store \($holds) s, in checkouts \($checkouts) s (summed over requests)"' \
  "$out/sale.json"
bench_stop
