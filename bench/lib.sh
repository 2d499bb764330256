# What the bench and deploy scripts share: a release build, waiting until something
# answers, one server on a database of its own, the load generator against it, and a
# clean stop. Sourced:
#
#   . "$(dirname "$0")/lib.sh"
#   bench_build                          # cargo build --release; sets $bin
#   wait_for <what> <command...>         # runs the command until it succeeds (30 s at
#                                        # most); says what it gave up on
#   bench_serve <db> <port> <log> [serve flags...]
#                                        # stops any server this script started, starts
#                                        # `$bin serve` (extra environment as usual), waits
#                                        # for /healthz; sets $server (its pid), $base
#   bench_run <out.json> [bench args...] # `$bin bench` against $base, as JSON; a failed
#                                        # check is said on stderr, not fatal
#   bench_stop                           # stops the server and drops its database
#   bench_settle                         # a checkpoint and a pause between measurements
#
# The server and the load generator share the admin token and JWT secret below. bench_stop
# runs on exit (a script that sets its own EXIT trap after sourcing runs only its own).
# Needs psql and curl, Postgres on 127.0.0.1:5432 (user postgres, trust).

BENCH_ADMIN=bench-admin
BENCH_SECRET=bench-secret
bench_pg=(-h 127.0.0.1 -U postgres)
bin=${bin:-target/release/boxoffice}
server=
bench_db=

bench_lib_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

bench_build() {
  (cd "$bench_lib_root" && cargo build --release -q --bin boxoffice)
  bin=$bench_lib_root/target/release/boxoffice
}

wait_for() {
  local what=$1
  shift
  for _ in $(seq 150); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  echo "gave up waiting for $what" >&2
  return 1
}

bench_stop() {
  if [[ -n $server ]]; then
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
  fi
  server=
  if [[ -n $bench_db ]]; then
    psql "${bench_pg[@]}" -qc "drop database if exists $bench_db with (force)" || true
  fi
  bench_db=
}
trap bench_stop EXIT

bench_serve() {
  local db=$1 port=$2 log=$3
  shift 3
  bench_stop
  bench_db=$db
  base=http://127.0.0.1:$port
  "$bin" serve --bind "127.0.0.1:$port" \
    --database-url "postgres://postgres@127.0.0.1:5432/$db" \
    --admin-token "$BENCH_ADMIN" --jwt-secret "$BENCH_SECRET" "$@" >>"$log" 2>&1 &
  server=$!
  wait_for "the server (its log: $log)" curl -sf "$base/healthz" || exit 1
}

bench_run() {
  local report=$1
  shift
  "$bin" bench --url "$base" --admin-token "$BENCH_ADMIN" --jwt-secret "$BENCH_SECRET" \
    --json "$@" >"$report" || echo "a check of $(basename "$report" .json) failed" >&2
}

bench_settle() {
  psql "${bench_pg[@]}" -qc checkpoint
  sleep 3
}

# nginx as the cache of waiting-room statuses (`GET /v1/events/{id}/queue/status`), the
# same bytes for every buyer until they change: it keeps each for the max-age the origin
# gives, makes concurrent misses wait for one request to the origin (proxy_cache_lock) and
# answers from the stale copy while that one request refreshes it, so the origin sees at
# most one request per max-age per event; an If-None-Match it answers itself (304).
# haproxy's own cache (HAProxy 2.6) would let every request that misses at the same moment
# through. Writes <dir>/nginx.conf listening on 127.0.0.1:<port>, in front of <origins>
# (host:port ...); start it with `nginx -p <dir> -c <dir>/nginx.conf`.
line_cache_conf() { # dir port origins...
  local dir=$1 port=$2 o servers=""
  shift 2
  for o in "$@"; do servers+="        server $o max_fails=1 fail_timeout=2s;"$'\n'; done
  mkdir -p "$dir/nginx-cache" "$dir/nginx-tmp"
  cat >"$dir/nginx.conf" <<CONF
daemon off;
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/nginx-error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $dir/nginx-tmp;
    proxy_temp_path $dir/nginx-tmp;
    fastcgi_temp_path $dir/nginx-tmp;
    uwsgi_temp_path $dir/nginx-tmp;
    scgi_temp_path $dir/nginx-tmp;
    proxy_cache_path $dir/nginx-cache levels=1 keys_zone=line_status:1m max_size=16m inactive=1m;
    upstream origins {
$servers        keepalive 16;
    }
    server {
        listen 127.0.0.1:$port;
        location ~ ^/v1/events/[^/]+/queue/status\$ {
            proxy_pass http://origins;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_next_upstream error timeout http_502 http_503;
            proxy_cache line_status;
            proxy_cache_key \$uri;
            proxy_cache_lock on;
            proxy_cache_lock_timeout 5s;
            proxy_cache_use_stale updating error timeout;
            proxy_cache_background_update on;
            proxy_cache_revalidate on;
        }
        location / { return 404; }
    }
}
CONF
}
