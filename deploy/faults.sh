#!/usr/bin/env bash
# The fault matrix: a flash sale by the load generator while one fault happens, for each
# fault in turn, on a Postgres and a Redis of the script's own (started here, stopped at
# the end; the machine's are left alone):
#
#   pg-restart    Postgres restarted (pg_ctl restart -m fast)           postgres store
#   pg-kill       Postgres killed with SIGKILL, then started            postgres store
#   pg-kill       the same                                              redis store
#   redis-kill    Redis killed with SIGKILL, started again empty        redis store
#   server-kill   the server killed with SIGKILL, then started          redis store
#   redis-kill    Redis killed, started empty, while orders wait        redis store
#                 for payment (no sale): each is paid after it, and a
#                 rival's hold of its seat is refused
#
# Each sale must keep its invariants (the load generator's checks: no seat sold twice,
# every order a buyer was told of present with its seats, no hold past its TTL), answer no
# 500 (an error is a 503 with Retry-After, or no answer while the server is down), and
# recover without a restart of anything but what the fault stopped. Beside the sale, a
# probe holds one seat of an event of its own every 100 ms, keeping the turns the server's
# adaptive limit gives during the sale as a buyer's page does (they are the crowd, not the
# fault): the time from its first failed hold to its last is the fault's error window
# (what failed is printed beside it), and its holds that were acknowledged but
# are gone after the fault are what the fault lost (hold commits are asynchronous on
# Postgres, and Redis restarted empty has no data at all).
#
#   deploy/faults.sh            (builds target/release/boxoffice if missing)
# FAULTS_DIR (a temporary directory), FAULTS_PG_PORT (5544), FAULTS_REDIS_PORT (7301),
# FAULTS_PORT (3990).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
bin=$root/target/release/boxoffice
[[ -x $bin ]] || bench_build
dir=${FAULTS_DIR:-$(mktemp -d)}
pg_port=${FAULTS_PG_PORT:-5544}
redis_port=${FAULTS_REDIS_PORT:-7301}
port=${FAULTS_PORT:-3990}
pg_bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
db=postgres://postgres@127.0.0.1:$pg_port/faults
export BOXOFFICE_ADMIN_TOKEN=faults-admin BOXOFFICE_JWT_SECRET=faults-secret
server=""

log() { printf '== %s\n' "$*"; }
as_postgres() { su postgres -s /bin/sh -c "$(printf '%q ' "$@")"; }

pg_start() {
  as_postgres "$pg_bin/pg_ctl" -D "$dir/pg" -l "$dir/pgrun/pg.log" -w \
    -o "-p $pg_port -k $dir/pgrun -c listen_addresses=127.0.0.1 -c max_connections=200" start >/dev/null
}
pg_pid() { head -n 1 "$dir/pg/postmaster.pid"; }
redis_start() {
  redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no \
    --daemonize yes --pidfile "$dir/redis.pid" --logfile "$dir/redis.log"
  wait_for "Redis" redis-cli -p "$redis_port" ping
}
serve_start() { # store
  "$bin" serve --bind 127.0.0.1:"$port" --database-url "$db" --hold-store "$1" \
    --redis-url "redis://127.0.0.1:$redis_port" --holds-per-minute 0 \
    --db-pool-size 16 >>"$dir/server.log" 2>&1 &
  server=$!
  wait_for "the server" curl -fsS "http://127.0.0.1:$port/healthz"
}
serve_stop() {
  [[ -n $server ]] || return 0
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  server=""
}

cleanup() {
  serve_stop
  [[ -f $dir/redis.pid ]] && kill "$(cat "$dir/redis.pid")" 2>/dev/null || true
  as_postgres "$pg_bin/pg_ctl" -D "$dir/pg" stop -m immediate >/dev/null 2>&1 || true
}
trap cleanup EXIT

log "a Postgres of its own on $pg_port, a Redis on $redis_port, in $dir"
chmod 755 "$dir"
mkdir -p "$dir/pg" "$dir/pgrun" && chown postgres "$dir/pg" "$dir/pgrun"
as_postgres "$pg_bin/initdb" -D "$dir/pg" -U postgres --auth=trust >/dev/null
pg_start
psql -h 127.0.0.1 -p "$pg_port" -U postgres -qc 'create database faults'
redis_start
"$bin" migrate --database-url "$db" >/dev/null

# Runs one sale with one fault; prints what happened and fails on a broken promise.
sale_with() { # name store fault-command...
  local name=$1 store=$2
  shift 2
  log "$name on the $store store"
  serve_start "$store"
  python3 "$root/deploy/faults_probe.py" "http://127.0.0.1:$port" "$dir/probe-$name-$store.json" &
  local probe=$!
  wait_for "the probe" test -e "$dir/probe-$name-$store.json.ready"
  "$bin" bench --url "http://127.0.0.1:$port" --json flash-sale --seats 6000 --buyers 3000 \
    --think 2s --hold-ttl 10 --time-limit 60s >"$dir/sale-$name-$store.json" &
  local sale=$!
  sleep 1.5
  "$@"
  local result=0
  wait "$sale" || result=$?
  kill -TERM "$probe" 2>/dev/null || true
  wait "$probe" || true
  jq -r '.checks[] | "   \(if .passed then "ok  " else "FAIL" end) \(.name)"' "$dir/sale-$name-$store.json"
  local statuses
  statuses=$(jq -c '[.operations[] | {(.name): .statuses}] | add' "$dir/sale-$name-$store.json")
  echo "   answers: $statuses"
  jq -r '"   error window \(.window_ms) ms (\(.failed) of \(.probes) probe holds failed); holds acknowledged and lost: \(.lost) of \(.acknowledged)"' \
    "$dir/probe-$name-$store.json"
  jq -r '"   the probe'"'"'s slowest hold, turns kept: \(.slowest_ms) ms"' "$dir/probe-$name-$store.json"
  jq -r 'select(.failed > 0) | "   the probe'"'"'s failures: \(.failed_as | to_entries | map("\(.value) × \(.key)") | join(", ")), the first \(.first_failure_s) s in"' \
    "$dir/probe-$name-$store.json"
  # Recovery: after the fault, a hold and its checkout go through.
  local after
  after=$(python3 "$root/deploy/faults_probe.py" "http://127.0.0.1:$port" --once)
  echo "   after the fault: $after"
  serve_stop
  ((result == 0)) || { echo "the sale's checks failed: $name on the $store store" >&2; return 1; }
  if jq -e '[.operations[].statuses | keys[] | tonumber | select(. >= 500 and . != 503)] | length > 0' \
    "$dir/sale-$name-$store.json" >/dev/null; then
    echo "a 5xx other than 503: $name on the $store store" >&2
    return 1
  fi
  [[ $after == ok* ]] || { echo "no recovery: $name on the $store store" >&2; return 1; }
}

pg_restart() { as_postgres "$pg_bin/pg_ctl" -D "$dir/pg" restart -m fast -w >/dev/null; }
pg_kill() {
  kill -9 "$(pg_pid)"
  sleep 1
  # The postmaster is gone; its children follow it. Start again once the port is free.
  for _ in $(seq 50); do pg_start 2>/dev/null && return 0; sleep 0.2; done
  return 1
}
redis_kill() {
  kill -9 "$(cat "$dir/redis.pid")"
  sleep 1
  redis_start
}
server_kill() {
  kill -9 "$server"
  wait "$server" 2>/dev/null || true
  sleep 1
  serve_start redis
}

# Orders waiting for payment when Redis restarts empty: Postgres has them, so each is still
# paid before its pay_by, and nobody else takes its seats meanwhile.
pending_through() { # name store fault-command...
  local name=$1 store=$2
  shift 2
  log "$name while orders wait for payment, on the $store store"
  serve_start "$store"
  python3 "$root/deploy/faults_probe.py" "http://127.0.0.1:$port" --pending "$dir/pending-$name.json"
  "$@"
  local after
  after=$(python3 "$root/deploy/faults_probe.py" "http://127.0.0.1:$port" --pay "$dir/pending-$name.json")
  echo "   after the fault: $after"
  serve_stop
  [[ $after == ok* ]] || { echo "a pending order did not outlive $name on the $store store" >&2; return 1; }
}

sale_with pg-restart postgres pg_restart
sale_with pg-kill postgres pg_kill
sale_with pg-kill redis pg_kill
sale_with redis-kill redis redis_kill
sale_with server-kill redis server_kill
pending_through redis-kill redis redis_kill
log "every fault: invariants kept, no 500, recovered"
