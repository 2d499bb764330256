#!/usr/bin/env bash
# Overload: 5,000 buyers at once on a 20,000-seat sale with no waiting room, against one
# server with the adaptive concurrency limits off (BOXOFFICE_OVERLOAD_TARGET_MS=0) and on
# (=<target>; 100 is the default), alternating, each on a fresh database. Prints per run
# the holds' p50 and
# p99 as the load generator saw them (all answers, 2xx alone, 503 alone), the bucket of the
# server's own latency histogram holding the p99 of its 201 holds (time in the handler,
# without the connection's wait to be read), checkouts' p99 and seats sold a second.
#   bench/overload.sh [runs] [buyers] [seats] [store] [target ms]
#   (defaults: 2 5000 20000 postgres 100)
# Writes the reports to target/bench/overload-<time>/. Needs curl, jq and psql.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-2} buyers=${2:-5000} seats=${3:-20000} store=${4:-postgres} on_target=${5:-100}
. bench/lib.sh
bench_build
out=target/bench/overload-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
for run in $(seq "$runs"); do
  for mode in off on; do
    target=$([[ $mode == off ]] && echo 0 || echo "$on_target")
    BOXOFFICE_OVERLOAD_TARGET_MS=$target BOXOFFICE_HOLD_STORE=$store \
      BOXOFFICE_HOLDS_PER_MINUTE=1000000 RUST_LOG=error \
      bench_serve boxoffice_overload_$$ 3996 "$out/server.log"
    psql -q -h 127.0.0.1 -U postgres -c checkpoint
    sleep 2
    report=$out/$mode-$run.json
    bench_run "$report" --label "limit-$mode" flash-sale --seats "$seats" --buyers "$buyers"
    metrics=$(curl -s $base/metrics)
    shed=$(awk '/^boxoffice_overload_shed_total/ {n += $2} END {print n + 0}' <<<"$metrics")
    # The first bucket of the server's histogram of holds answered <status> that holds 99%
    # of them.
    server_p99() {
      grep -F "route=\"/v1/events/{id}/holds\",status=\"$1\"" <<<"$metrics" |
        grep _bucket | sed 's/.*le="\([^"]*\)"} \(.*\)/\1 \2/' |
        awk '{le[NR] = $1; n[NR] = $2} END {for (i = 1; i <= NR; i++) if (n[i] >= 0.99 * n[NR]) {print "≤ " le[i] * 1000 " ms"; exit}}'
    }
    server_p99=$(server_p99 201)
    server_refused=$(server_p99 503)
    jq -r --arg mode "$mode" --arg shed "$shed" --arg server "$server_p99" --arg refused "$server_refused" '
      def ms(l): if l == null then "-" else "\(l.p50 | round)/\(l.p99 | round)" end;
      .operations as $o
      | "limit \($mode): holds p50/p99 all \(ms($o[0].latency_ms)) ms, 2xx \(ms($o[0].granted_ms)) ms (server p99 \($server)), 503 \(ms($o[0].refused_ms)) ms (server p99 \($refused)) \($o[0].statuses); checkouts p99 \($o[1].latency_ms.p99 | round) ms \($o[1].statuses); seats sold \(.figures.seats_sold) in \(.elapsed_seconds * 10 | round / 10) s = \(.figures.seats_sold_per_second | round)/s; shed \($shed); checks \([.checks[] | select(.passed | not)] | length) failed"' "$report"
    bench_stop
  done
done
echo "reports: $out"
