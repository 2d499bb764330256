#!/usr/bin/env bash
# Two builds of the server side by side in one window: closed-loop holds (64 workers, 10 s)
# on 100,000 random seats, or on one hot seat, or a flash sale (5,000 buyers on 20,000
# seats), on each store, alternating the two binaries on a fresh database each run, so a
# change on the hold or sale path is measured against the build before it. The load
# generator is the second build's for both.
#
#   bench/ab.sh <before-binary> <after-binary> [pairs (3)] [stores ("postgres redis")] [seats (100000; 1 for a hot seat; flash-sale)]
#
# Prints a line per run (store, build, requests a second, p99 ms; for a flash sale seats
# sold a second and the holds' p99 ms) and the mean of each; on a hot seat nearly every
# request is a refusal.
# Needs psql, curl and jq, Postgres on 127.0.0.1:5432 (user postgres, trust) and Redis on
# 127.0.0.1:6379. Leaves no database or server behind.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
before=$1 after=$2 pairs=${3:-3} stores=${4:-postgres redis} seats=${5:-100000}
out=$(mktemp -d)
trap 'bench_stop; rm -rf "$out"' EXIT
ulimit -n 65536 2>/dev/null || true
for store in $stores; do
  for pair in $(seq "$pairs"); do
    for build in before after; do
      bin=$before
      [[ $build == after ]] && bin=$after
      BOXOFFICE_HOLD_STORE=$store BOXOFFICE_HOLDS_PER_MINUTE=1000000 RUST_LOG=warn \
        bench_serve boxoffice_ab_$$ 3996 "$out/server.log"
      bench_settle
      if [[ $seats == flash-sale ]]; then
        bin=$after bench_run "$out/run.json" flash-sale --seats 20000 --buyers 5000
        jq -r --arg s "$store" --arg b "$build" \
          '"\($s) \($b) \(.figures.seats_sold_per_second | round) \(.operations[0].latency_ms.p99)"' \
          "$out/run.json" | tee -a "$out/lines"
      else
        bin=$after bench_run "$out/run.json" holds --seats "$seats" --workers 64 --duration 10s
        jq -r --arg s "$store" --arg b "$build" \
          '"\($s) \($b) \(.operations[0].per_second | round) \(.operations[0].latency_ms.p99)"' \
          "$out/run.json" | tee -a "$out/lines"
      fi
    done
  done
done
echo "mean requests (flash sale: seats sold) a second:"
awk '{ n[$1" "$2]++; s[$1" "$2] += $3 } END { for (k in n) printf "%s %.0f\n", k, s[k] / n[k] }' \
  "$out/lines" | sort
