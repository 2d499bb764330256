#!/usr/bin/env bash
# The service's own hold statement with nothing in front of it, beside the bare ceilings:
# the part of a hold the store does. JSON lines to <out.jsonl>:
#   postgres: pgbench (16 clients, prepared, the server's session settings) calling
#             boxoffice_claim_hold, the function a hold of the postgres store runs alone, for
#             one random seat of the 100,000-seat event the service's runs used and one of
#             50,000 buyers, as `boxoffice bench holds` asks; then (two clients, one per
#             lane) boxoffice_claim_holds, which the store's lanes call under load, with 32
#             such holds a call: two JSON lines;
#   redis:    redis-benchmark (50 clients) on the redis store's acquire script
#             (scripts/prelude.lua + scripts/hold_acquire.lua) over that event's keys, a
#             random seat and buyer per call.
# Run it right after the service's runs on that store, with the server idle:
#
#   bench/ceilings/service_alone.sh postgres|redis <seconds> <database> <out.jsonl>
#
# <database> is the server's database. Checks that one call holds a seat before measuring,
# so a figure never comes from calls that are all refused.
set -euo pipefail
cd "$(dirname "$0")/../.."
store=$1 secs=$2 db=$3 out=$4
pg=(-h 127.0.0.1 -U postgres -d "$db")
# The 100,000-seat event the random-seat runs held on.
read -r event ttl max version < <(psql "${pg[@]}" -AtF ' ' -c "
  select e.event_id, e.hold_ttl_seconds, e.max_seats_per_user, e.layout_version
    from event e join seat_allocation a using (event_id)
   group by e.event_id having count(*) = 100000 order by e.created_at limit 1")
[[ -n ${event:-} ]] || { echo "service_alone.sh: no 100,000-seat event in $db" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [[ $store == postgres ]]; then
  # Seat ids by number, so pgbench can pick one at random; dropped afterwards.
  psql "${pg[@]}" -qc "set client_min_messages = warning" -c "drop table if exists bench_seat" -c "
    create table bench_seat (n int primary key, seat_id text not null);
    insert into bench_seat select row_number() over (order by seat_id), seat_id
      from seat_allocation where event_id = '$event'"
  cat >"$work/claim.sql" <<EOF
\set n random(1, 100000)
\set u random(1, 50000)
select * from boxoffice_claim_hold('$event', gen_random_uuid(), 'alone-' || :u, $ttl,
  array[(select seat_id from bench_seat where n = :n)], $max, null, null);
EOF
  # As the server's connections are set up (boxoffice-store's db.rs).
  export PGOPTIONS="-c default_transaction_isolation=read\\ committed -c plan_cache_mode=force_generic_plan"
  first=$(psql "${pg[@]}" -At -c "select outcome from boxoffice_claim_hold('$event', gen_random_uuid(),
    'alone-check', $ttl, array[(select seat_id from bench_seat order by random() limit 1)], $max,
    null, null)")
  [[ $first == held ]] || { echo "service_alone.sh: the claim answered '$first', not 'held'" >&2; exit 1; }
  psql "${pg[@]}" -qc checkpoint
  sleep 3
  tps=$(pgbench "${pg[@]}" -n -M prepared -c 16 -j 2 -T "$secs" -f "$work/claim.sql" 2>/dev/null |
    sed -n 's/^tps = \([0-9.]*\).*/\1/p')
  # As a lane sends claims under load: 32 one-seat holds by random buyers a call of
  # boxoffice_claim_holds, one client per lane (two on this machine); holds a second.
  cat >"$work/claims.sql" <<SQL
select count(*) from boxoffice_claim_holds(array_fill('$event'::uuid, array[32]),
  array(select gen_random_uuid() from generate_series(1, 32)),
  array(select 'alone-' || (random() * 50000)::int from generate_series(1, 32)),
  array_fill($ttl::float8, array[32]), array_fill($max::bigint, array[32]),
  array_fill(null::uuid, array[32]), array_fill(null::text, array[32]),
  array(select generate_series(1, 32)),
  array(select seat_id from bench_seat
         where n = any(array(select (random() * 99999)::int + 1 from generate_series(1, 32)))));
SQL
  psql "${pg[@]}" -qc checkpoint
  sleep 3
  calls=$(pgbench "${pg[@]}" -n -M prepared -c 2 -j 2 -T "$secs" -f "$work/claims.sql" 2>/dev/null |
    sed -n 's/^tps = \([0-9.]*\).*/\1/p')
  unset PGOPTIONS
  psql "${pg[@]}" -qc "drop table bench_seat"
  echo "{\"name\": \"pgbench boxoffice_claim_hold, one random seat\", \"per_second\": $tps}" >>"$out"
  echo "{\"name\": \"pgbench boxoffice_claim_holds, 32 random seats a call\", \"per_second\": $(jq -n "$calls * 32")}" >>"$out"
else
  { cat crates/boxoffice-store/scripts/prelude.lua; echo; cat crates/boxoffice-store/scripts/hold_acquire.lua; } >"$work/acquire.lua"
  sha=$(redis-cli SCRIPT LOAD "$(cat "$work/acquire.lua")")
  # The event's loaded state, kept loaded and not due for a refresh while this runs.
  sync="sync:{$event}"
  [[ $(redis-cli HGET "$sync" v) == "$version" ]] ||
    { echo "service_alone.sh: $sync is not loaded at version $version" >&2; exit 1; }
  now=$(redis-cli TIME | head -1)
  redis-cli HSET "$sync" r $(((now + 3600) * 1000)) >/dev/null
  redis-cli PEXPIRE "$sync" 3600000 >/dev/null
  keys=("$sync" "fence:{$event}" "sold:{$event}" "held:{$event}" "holduser:{$event}:__rand_int__"
    "holdtok:{$event}:__rand_int__" "holdrate:{$event}:__rand_int__" "hold:{$event}:__rand_int__")
  # token, user, ttl ms, limit, version, quotes, rate (60000 / 1,000,000 a minute), burst,
  # then the seat and whether it is on sale. Each __rand_int__ is drawn on its own, so the
  # seat named differs from its key: the same work either way.
  args=(alone-token alone-__rand_int__ $((ttl * 1000)) "$max" "$version" '[]' 0.06 1000000 __rand_int__ 1)
  answer=$(redis-cli EVALSHA "$sha" 8 "${keys[@]//__rand_int__/check}" "${args[@]//__rand_int__/check}" | head -1)
  [[ $answer == held ]] || { echo "service_alone.sh: the script answered '$answer', not 'held'" >&2; exit 1; }
  rps=$(redis-benchmark -n $((secs * 30000)) -c 50 -r 100000 -q EVALSHA "$sha" 8 "${keys[@]}" "${args[@]}" 2>/dev/null |
    tr '\r' '\n' | grep -o '[0-9.]* requests per second' | tail -1 | cut -d' ' -f1)
  echo "{\"name\": \"redis-benchmark hold_acquire, one random seat\", \"per_second\": $rps}" >>"$out"
fi
