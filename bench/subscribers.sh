#!/usr/bin/env bash
# Idle live-update subscribers: the server's resident memory with N streams open and how
# long a change takes to reach all of them. Starts a release server on a free port and a
# scratch database; leaves nothing behind.
#   bench/subscribers.sh [subscribers]     (default 10000; builds what it runs first)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-10000}
cargo build --release -q --bin boxoffice
cargo build --release -q -p boxoffice-loadgen --example subscribers_bench
port=3998 db=postgres://postgres@127.0.0.1:5432/subscribers_bench_$$
# The streams and the bench's own calls together exceed the default cap on connections.
BOXOFFICE_MAX_CONNECTIONS=$((n + 1000)) target/release/boxoffice serve --bind 127.0.0.1:$port --database-url "$db" \
  --admin-token adm --jwt-secret sec >/dev/null 2>&1 & server=$!
cleanup() {
  kill $server 2>/dev/null || true
  wait $server 2>/dev/null || true
  psql -q -h 127.0.0.1 -U postgres -c "drop database if exists subscribers_bench_$$ with (force)" || true
}
trap cleanup EXIT
for _ in $(seq 100); do curl -sf http://127.0.0.1:$port/healthz >/dev/null && break; sleep 0.1; done
target/release/examples/subscribers_bench http://127.0.0.1:$port adm sec "$n" $server
