#!/usr/bin/env bash
# A line of many (`boxoffice bench line`): <buyers> join a waiting room before it opens,
# then poll their tickets as fast as one server answers for <seconds>, while 8 clients read
# the line's public status. Twice: straight to the server, then through haproxy with the
# statuses sent to nginx's cache (deploy/cluster.sh's configuration, bench/lib.sh
# line_cache_conf), which must pass at most one status request per max-age to the server. The waiting room's Redis is one of this script's own (port
# 6392), so its commands are the server's alone; the server's database is fresh.
#   bench/line.sh [buyers] [seconds]      (defaults: 100000 20)
# With $bin set, that build is measured; else this tree's release build (built first).
# Needs psql, curl, jq, redis-server, haproxy and nginx.
set -euo pipefail
cd "$(dirname "$0")/.."
buyers=${1:-100000} seconds=${2:-20}
given=${bin:-}
. bench/lib.sh
[[ -n $given ]] || bench_build
out=target/bench/line-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
redis_port=6392 cache_port=3999 server_port=3995
redis-server --port $redis_port --save '' --appendonly no --daemonize yes \
  --pidfile "$PWD/$out/redis.pid" --logfile "$PWD/$out/redis.log"
nginx_port=3998
line_cache_conf "$PWD/$out" $nginx_port 127.0.0.1:$server_port
nginx -p "$PWD/$out" -c "$PWD/$out/nginx.conf" >"$out/nginx.log" 2>&1 &
nginx_pid=$!
# The balancer of deploy/cluster.sh: statuses to the cache, the rest to the server.
cat >"$out/haproxy.cfg" <<CFG
defaults
    mode http
    timeout connect 2s
    timeout client 60s
    timeout server 60s
frontend line
    bind 127.0.0.1:$cache_port
    acl line_status path_reg ^/v1/events/[^/]+/queue/status\$
    use_backend line_cache if line_status
    default_backend server
backend line_cache
    server cache 127.0.0.1:$nginx_port
backend server
    server one 127.0.0.1:$server_port
CFG
haproxy -db -f "$out/haproxy.cfg" >"$out/haproxy.log" 2>&1 &
cache=$!
stop_all() {
  kill "$cache" "$nginx_pid" 2>/dev/null || true
  kill "$(cat "$out/redis.pid" 2>/dev/null)" 2>/dev/null || true
  bench_stop
}
trap stop_all EXIT
for via in server cache; do
  redis-cli -p $redis_port flushall >/dev/null
  redis-cli -p $redis_port config resetstat >/dev/null
  REDIS_URL=redis://127.0.0.1:$redis_port RUST_LOG=error \
    bench_serve "boxoffice_line_$$" $server_port "$out/server.log"
  bench_settle
  [[ $via == cache ]] && base=http://127.0.0.1:$cache_port
  bench_run "$out/line-$via.json" line --buyers "$buyers" --duration "${seconds}s" \
    --redis-url "redis://127.0.0.1:$redis_port" \
    --database-url "postgres://postgres@127.0.0.1:5432/boxoffice_line_$$" \
    --origin "http://127.0.0.1:$server_port"
  jq -r --arg via "$via" '
    def f(n): .figures[n] // 0;
    "\($via): \(f("joins_per_second") | round) joins/s, \(f("polls_per_second") | round) polls/s, \(f("redis_calls_per_waiting_poll")) Redis calls and \(f("pg_transactions_per_poll")) Postgres transactions per waiting poll, \(f("status_polls_per_second") | round) status polls/s of which \(f("status_origin_requests")) reached the server, \(f("admitted")) admitted, \(f("overtaken")) overtaken, admission to pass p50 \(f("admission_to_pass_p50_ms") | round) ms p99 \(f("admission_to_pass_p99_ms") | round) ms, checks \([.checks[] | .passed] | all)"' \
    "$out/line-$via.json"
  bench_stop
done
echo "reports in $out"
