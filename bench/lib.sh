# What the bench scripts share: a release build, one server on a database of its own,
# waiting until it answers, the load generator against it, and a clean stop. Sourced:
#
#   . "$(dirname "$0")/lib.sh"
#   bench_build                          # cargo build --release; sets $bin
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
# runs on exit. Needs psql and curl, Postgres on 127.0.0.1:5432 (user postgres, trust).

BENCH_ADMIN=bench-admin
BENCH_SECRET=bench-secret
bench_pg=(-h 127.0.0.1 -U postgres)
bin=${bin:-target/release/boxoffice}
server=
bench_db=

bench_build() {
  cargo build --release -q --bin boxoffice
  bin=target/release/boxoffice
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
  for _ in $(seq 300); do
    curl -sf "$base/healthz" >/dev/null && return 0
    kill -0 "$server" 2>/dev/null || break
    sleep 0.1
  done
  echo "the server did not start (its log: $log)" >&2
  exit 1
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
