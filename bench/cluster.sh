#!/usr/bin/env bash
# The same load through deploy/cluster.sh's balancer with 1, 2 and 3 instances, on each hold
# store, and on one instance without the balancer (what haproxy costs). Reports and a
# summary (summary.md) go to target/bench/cluster-<time>/.
#
#   bench/cluster.sh [--quick]     (--quick: 3 s runs, smaller sale)
#
# Needs what deploy/cluster.sh needs (haproxy, jq, root or the postgres user for the
# replica) and the ports it uses, and what bench/ceilings/measure.sh needs (the bare
# stores' ceilings are measured before and after). Each cluster gets a database of its own, dropped after.
# On two cores the load generator, haproxy, every instance, Postgres (and its replica) and
# Redis share the same two cores: read the figures as what the machine does, not as what
# an instance does.
set -euo pipefail
cd "$(dirname "$0")/.."

secs=10 sale_seats=20000 fans=5000
if [[ ${1:-} == --quick ]]; then secs=3 sale_seats=2000 fans=500; fi
out=target/bench/cluster-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
bin=target/release/boxoffice
cargo build --release --quiet

export BOXOFFICE_ADMIN_TOKEN=bench-admin BOXOFFICE_JWT_SECRET=bench-secret
export BOXOFFICE_HOLDS_PER_MINUTE=1000000 RUST_LOG=warn
CLUSTER_DIR=$(mktemp -d)
chmod 755 "$CLUSTER_DIR" # the replica's data directory inside belongs to postgres
export CLUSTER_DIR
trap 'deploy/cluster.sh down >/dev/null; rm -rf "$CLUSTER_DIR"' EXIT

log() { printf '== %s\n' "$*"; }

run() { # url label name scenario...
  local url=$1 label=$2 name=$3
  shift 3
  sleep 2 # let the previous run's connections close and the machine settle
  $bin bench --url "$url" --admin-token bench-admin --jwt-secret bench-secret \
    --json --label "$label" "$@" >"$out/$label-$name.json" ||
    log "$label $name: a check failed (see $out/$label-$name.json)"
}

# The bare stores' ceilings before and after: the machine's pace drifts over a run this
# long, and the figures are read against both.
log "ceilings"
bench/ceilings/measure.sh "$secs" "$out/ceilings-before.jsonl"

for store in postgres redis; do
  for n in 1 2 3; do
    log "$store store, $n instance(s)"
    export CLUSTER_DATABASE=boxoffice_bench_cluster_$$ BOXOFFICE_HOLD_STORE=$store
    CLUSTER_INSTANCES=$n deploy/cluster.sh up >"$out/up-$store-$n.log"
    url=http://127.0.0.1:${CLUSTER_PORT:-8080}
    label=$store-$n
    run "$url" "$label" floor floor --duration "${secs}s" --workers 64
    run "$url" "$label" holds holds --seats 100000 --workers 64 --duration "${secs}s"
    run "$url" "$label" hot holds --seats 1 --workers 64 --duration "${secs}s"
    run "$url" "$label" hot-seat hot-seat --buyers 2000
    run "$url" "$label" hot-seat-connected hot-seat --buyers 2000 --connected
    run "$url" "$label" flash-sale flash-sale --seats "$sale_seats" --buyers "$fans"
    run "$url" "$label" seat-map seat-map --seats 100000 --workers 4 --duration "${secs}s" --compressed
    if ((n == 1)); then
      # The same instance, asked directly.
      direct=http://127.0.0.1:8181
      run "$direct" "$store-direct" floor floor --duration "${secs}s" --workers 64
      run "$direct" "$store-direct" holds holds --seats 100000 --workers 64 --duration "${secs}s"
      run "$direct" "$store-direct" hot holds --seats 1 --workers 64 --duration "${secs}s"
    fi
    deploy/cluster.sh down >/dev/null
    psql -h 127.0.0.1 -U postgres -qc "drop database if exists $CLUSTER_DATABASE with (force)"
  done
done

log "ceilings again"
bench/ceilings/measure.sh "$secs" "$out/ceilings-after.jsonl"

# One row per store and size: requests a second and p99 of each run.
cell() { # file operation-index
  [[ -s $1 ]] || { echo "| – "; return; }
  jq -r --argjson i "$2" '"| \(.operations[$i].per_second | round)/s, p99 \(.operations[$i].latency_ms.p99 | . * 10 | round / 10) ms "' "$1"
}
{
  echo "| setup | GET /healthz | holds, random seats | holds, one seat | hot-seat 2,000 | hot-seat 2,000, connected | flash sale: hold p99, seats sold/s | seat map, compressed |"
  echo "|---|---|---|---|---|---|---|---|"
  for store in postgres redis; do
    for label in "$store-direct" "$store-1" "$store-2" "$store-3"; do
      case $label in
        *-direct) name="$store store, one instance, no balancer" ;;
        *) name="$store store, ${label##*-} instance(s) behind haproxy" ;;
      esac
      row="| $name "
      for run in floor holds hot hot-seat hot-seat-connected; do row+=$(cell "$out/$label-$run.json" 0); done
      if [[ -s $out/$label-flash-sale.json ]]; then
        row+=$(jq -r '"| \(.operations[0].latency_ms.p99 | round) ms, \(.figures.seats_sold_per_second | round)/s "' "$out/$label-flash-sale.json")
      else
        row+="| – "
      fi
      row+=$(cell "$out/$label-seat-map.json" 0)
      echo "$row|"
    done
  done
  echo
  echo "Ceilings before and after:"
  jq -rs '(.[0:length/2]) as $a | (.[length/2:]) as $b | range(0; $a | length) |
    "- \($a[.].name): \($a[.].per_second | round)/s, then \($b[.].per_second | round)/s"' \
    "$out/ceilings-before.jsonl" "$out/ceilings-after.jsonl"
} >"$out/summary.md"
cat "$out/summary.md"
log "reports and summary.md in $out"
