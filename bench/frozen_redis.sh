#!/usr/bin/env bash
# Holds and seat-map reads against a server whose Redis is frozen (SIGSTOP), each timed,
# then how long the service takes to recover once Redis is thawed (SIGCONT). Runs its own
# redis-server and server on free ports and a scratch database; leaves nothing behind.
#   bench/frozen_redis.sh            (builds target/release/boxoffice first)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
bench_build
rport=16399
redis-server --port $rport --save "" --appendonly no --logfile /dev/null & redis=$!
trap 'kill -CONT $redis 2>/dev/null || true; bench_stop; kill $redis 2>/dev/null || true' EXIT
bench_serve frozen_redis_$$ 3999 /dev/null --hold-store redis --redis-url redis://127.0.0.1:$rport \
  --anonymous-sessions true
post() { curl -s -H "authorization: Bearer $1" -H 'content-type: application/json' "$base$2" -d "$3"; }
id() { sed 's/.*"id":"\([^"]*\)".*/\1/'; }
venue=$(post $BENCH_ADMIN /v1/venues '{"name":"V","sections":[{"id":"s","name":"S","rows":[{"label":"A","seats":50}]}]}' | id)
event=$(post $BENCH_ADMIN /v1/events "{\"venue_id\":\"$venue\",\"name\":\"E\",\"starts_at\":\"2099-01-01T00:00:00Z\",\"ticket_types\":[{\"code\":\"t\",\"name\":\"T\",\"price_cents\":1,\"currency\":\"EUR\"}],\"allocations\":[{\"ticket_type\":\"t\",\"section\":\"s\"}]}" | id)
token=$(curl -s -X POST $base/v1/sessions | sed 's/.*"token":"\([^"]*\)".*/\1/')
hold() { curl -s -o /dev/null -w "hold %{http_code} in %{time_total}s" -H "authorization: Bearer $token" \
  -H 'content-type: application/json' $base/v1/events/$event/holds -d "{\"seats\":[\"s-A-$1\"]}"; }
echo "before the freeze: $(hold 1)"
kill -STOP $redis
for i in $(seq 2 11); do
  echo "frozen: $(hold $i); $(curl -s -D /tmp/frozen_h$$ -o /dev/null -w "seats %{http_code} in %{time_total}s" \
    $base/v1/events/$event/seats) $(grep -i boxoffice-holds /tmp/frozen_h$$ | tr -d '\r')"
done
rm -f /tmp/frozen_h$$
kill -CONT $redis
start=$(date +%s%N)
until [ "$(hold 40 | cut -c6-8)" = 201 ]; do sleep 0.02; done
echo "holds work again $(( ($(date +%s%N) - start) / 1000000 )) ms after the thaw"
