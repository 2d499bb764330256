#!/usr/bin/env bash
# What a seat costs in CPU, for one or more builds side by side in one window: a flash sale
# (5,000 buyers on 20,000 seats) and closed-loop holds (64 workers, 10 s, on 100,000
# seats), and with SCENARIOS naming it the door (every ticket of 20,000 standing places
# scanned once by 16 scanners, 200 of them revoked) against each build in turn, on each hold store, each run on a fresh database,
# the builds alternating so that whoever else uses the cores weighs on each alike.
#
#   bench/cost.sh <binary> [<binary> ...]
#
# Environment: ROUNDS (3) rounds of every build; STORES ("postgres redis"); SCENARIOS
# ("sale holds"); LOADGEN, the load generator's binary (the last build given). A build
# older than the load generator's marks is measured all the same: the load generator is
# the one that writes them.
#
# CPU is read from /proc between the load generator's marks (`bench --marks`: after the
# event is set up, before the checks), in user + system time: the server's process (every
# thread), Postgres' (the postmaster, its live children, and the backends that ended in
# between, counted in the postmaster's reaped-children time; the background writers and
# autovacuum included) and Redis' (idle on the postgres store, its timers aside). The load
# generator's own is printed apart and not counted. Each run prints a line; the end, the
# mean of each build per store and scenario:
#
#   store scenario build  units/s p99ms req/u  server postgres redis = total  loadgen
#
# where a unit is a seat sold (sale), a hold granted (holds) or a ticket let in (door), p99
# is the holds' (the check-ins'), req/u
# the requests sent per unit (refusals and retries included: a sale's cost moves with
# them) and the CPU columns are ms per unit.
# Postgres is shared with whatever else runs on it: measure on a quiet machine.
# Needs psql, curl, jq and redis-cli, Postgres on 127.0.0.1:5432 (user postgres, trust)
# and Redis on 127.0.0.1:6379. Leaves no database or server behind.
set -euo pipefail
cd "$(dirname "$0")/.."
(($# >= 1)) || {
  echo "usage: bench/cost.sh <binary> [<binary> ...]" >&2
  exit 2
}
builds=("$@")
for b in "${builds[@]}"; do [[ -x $b ]] || { echo "not an executable: $b" >&2; exit 2; }; done
loadgen=${LOADGEN:-${builds[-1]}}
rounds=${ROUNDS:-3} stores=${STORES:-postgres redis} scenarios=${SCENARIOS:-sale holds}
. bench/lib.sh
out=$(mktemp -d)
trap 'bench_stop; rm -rf "$out"' EXIT
ulimit -n 65536 2>/dev/null || true
ticks=$(getconf CLK_TCK)

pg_data=$(psql "${bench_pg[@]}" -Atc 'show data_directory')
postmaster=$(head -n 1 "$pg_data/postmaster.pid")
redis_pid=$(redis-cli -h 127.0.0.1 -p 6379 info server | tr -d '\r' | awk -F: '$1 == "process_id" { print $2 }')

# Clock ticks of user + system time of pid $1, with its reaped children's when $2 is set.
ticks_of() {
  local fields
  fields=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null) || { echo 0; return; }
  # After the command's closing parenthesis, utime and stime are fields 12 and 13,
  # the reaped children's 14 and 15.
  if [[ -n ${2:-} ]]; then
    awk '{ print $12 + $13 + $14 + $15 }' <<<"$fields"
  else
    awk '{ print $12 + $13 }' <<<"$fields"
  fi
}
postgres_ticks() {
  local sum child
  sum=$(ticks_of "$postmaster" children)
  for child in $(pgrep -P "$postmaster"); do
    sum=$((sum + $(ticks_of "$child" children)))
  done
  echo "$sum"
}
# "<server> <postgres> <redis> <load generator>" in clock ticks, now.
counters() {
  echo "$(ticks_of "$server") $(postgres_ticks) $(ticks_of "$redis_pid") $(ticks_of "$run")"
}

echo "builds:"
for i in "${!builds[@]}"; do echo "  b$((i + 1)) ${builds[$i]}"; done
echo "load generator: $loadgen"
printf '%-8s %-5s %-3s %8s %7s %5s  %7s %8s %6s = %6s  %7s\n' store scen build "units/s" "p99ms" \
  "req/u" server postgres redis total loadgen
for store in $stores; do
  for round in $(seq "$rounds"); do
    for scenario in $scenarios; do
      for i in "${!builds[@]}"; do
        bin=${builds[$i]}
        BOXOFFICE_HOLD_STORE=$store BOXOFFICE_HOLDS_PER_MINUTE=1000000 RUST_LOG=warn \
          bench_serve "boxoffice_cost_$$" 3994 "$out/server.log"
        bench_settle
        rm -rf "$out/marks" && mkdir "$out/marks"
        case $scenario in
          sale) args=(flash-sale --seats 20000 --buyers 5000) ;;
          holds) args=(holds --seats 100000 --workers 64 --duration 10s) ;;
          door) args=(door --tickets 20000 --scanners 16 --revoked 200) ;;
          *) echo "no scenario $scenario (sale, holds, door)" >&2; exit 2 ;;
        esac
        "$loadgen" bench --url "$base" --admin-token "$BENCH_ADMIN" --jwt-secret "$BENCH_SECRET" \
          --json --marks "$out/marks" "${args[@]}" >"$out/run.json" &
        run=$!
        while [[ ! -e $out/marks/start ]] && kill -0 "$run" 2>/dev/null; do sleep 0.02; done
        read -r s0 p0 r0 l0 <<<"$(counters)"
        while [[ ! -e $out/marks/end ]] && kill -0 "$run" 2>/dev/null; do sleep 0.02; done
        read -r s1 p1 r1 l1 <<<"$(counters)"
        wait "$run" || echo "a check of the $scenario run failed (b$((i + 1)), $store)" >&2
        if [[ $scenario == sale ]]; then
          units=$(jq -r '.figures.seats_sold' "$out/run.json")
          rate=$(jq -r '.figures.seats_sold_per_second' "$out/run.json")
        elif [[ $scenario == door ]]; then
          units=$(jq -r '.operations[0].statuses["201"] // 0' "$out/run.json")
          rate=$(jq -r '.figures.checkins_per_second' "$out/run.json")
        else
          units=$(jq -r '.operations[0].statuses["201"] // 0' "$out/run.json")
          rate=$(jq -r '.figures.holds_granted_per_second' "$out/run.json")
        fi
        p99=$(jq -r '.operations[0].latency_ms.p99' "$out/run.json")
        requests=$(jq -r '[.operations[].statuses | to_entries[].value] | add' "$out/run.json")
        awk -v st="$store" -v sc="$scenario" -v b="b$((i + 1))" -v u="$units" -v rate="$rate" \
          -v p99="$p99" -v q="$requests" -v k="$ticks" -v s=$((s1 - s0)) -v p=$((p1 - p0)) -v r=$((r1 - r0)) \
          -v l=$((l1 - l0)) 'BEGIN {
            if (u <= 0) { printf "%s %s %s: nothing sold or held\n", st, sc, b; exit }
            f = 1000 / k / u
            printf "%-8s %-5s %-3s %8.0f %7.1f %5.2f  %7.4f %8.4f %6.4f = %6.4f  %7.4f\n",
              st, sc, b, rate, p99, q / u, s * f, p * f, r * f, (s + p + r) * f, l * f
          }' | tee -a "$out/lines"
      done
    done
  done
done
echo
echo "means ($rounds rounds; ms of CPU per seat sold or hold granted):"
awk '$1 != "" && NF == 12 {
    k = $1 " " $2 " " $3; n[k]++; rate[k] += $4; p99[k] += $5; q[k] += $6
    s[k] += $7; p[k] += $8; r[k] += $9; t[k] += $11; l[k] += $12
  }
  END {
    for (k in n) printf "%-18s %8.0f %7.1f %5.2f  %7.4f %8.4f %6.4f = %6.4f  %7.4f\n", k, rate[k] / n[k],
      p99[k] / n[k], q[k] / n[k], s[k] / n[k], p[k] / n[k], r[k] / n[k], t[k] / n[k], l[k] / n[k]
  }' "$out/lines" | sort
