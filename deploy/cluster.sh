#!/usr/bin/env bash
# Boxoffice as a small cluster on this machine, from Debian and Rust packages only:
#
#   haproxy on 127.0.0.1:$CLUSTER_PORT (8080)   one public port, health-checked on /readyz;
#                                               its statistics on $CLUSTER_STATS_PORT (8081);
#                                               waiting-room statuses sent to nginx's cache
#                                               on $CLUSTER_CACHE_PORT (8082)
#     -> $CLUSTER_INSTANCES (three) instances     127.0.0.1:8181, 8182, 8183, ...
#   the redis hold store on a Redis Cluster     three masters, 127.0.0.1:7201-7203
#   Postgres: the primary (127.0.0.1:5432)      database boxoffice_cluster
#     + a streaming replica                     127.0.0.1:5433 (pg_basebackup, pg_ctl)
#   two outbox relays (`boxoffice relay`)       to $BOXOFFICE_WEBHOOK_URLS, or to a local
#                                               sink on 127.0.0.1:8190 that logs each delivery
#
#   deploy/cluster.sh up       start all of it (builds the release binary first)
#   deploy/cluster.sh status   what runs, and whether the balancer's backends are up
#   deploy/cluster.sh down     stop exactly what `up` started
#   deploy/cluster.sh test     up (if down), then through the balancer: four crowds of 200
#                              on one seat answered at once (one 201, the rest 409,
#                              whichever instance each reaches), 2,000 buyers on one seat,
#                              a flash sale, a change seen on a stream of another
#                              instance, the waiting room admitting in one order, an
#                              instance killed mid-sale, and seat maps read on while the
#                              replica is killed; down again if it brought the cluster up
#
# Settings from the environment: BOXOFFICE_ADMIN_TOKEN, BOXOFFICE_JWT_SECRET and
# BOXOFFICE_WEBHOOK_SECRET (generated and printed if unset), BOXOFFICE_HOLD_STORE (redis),
# CLUSTER_PORT (8080), CLUSTER_STATS_PORT (8081), CLUSTER_INSTANCES (3), CLUSTER_DATABASE
# (boxoffice_cluster: created and migrated if new, kept by `down`), CLUSTER_DIR
# (/tmp/boxoffice-cluster: pids, logs, the replica's and Redis' data). Every process it
# starts writes its pid to $CLUSTER_DIR/pids; `down` stops those and nothing else.
#
# To let pg_basebackup connect, `up` adds `host replication all 127.0.0.1/32 trust` to the
# primary's pg_hba.conf if no such line is there (and reloads it); `down` leaves it.
#
# The instances give Redis two seconds (BOXOFFICE_REDIS_TIMEOUT_MS) before they count it as
# down, not the 250 ms a server of its own gets: here three instances, three Redis nodes,
# two Postgres servers, the balancer and the load all share the machine's cores, and a
# sale's burst queues commands long enough that 250 ms reads as an outage (and answers 503).
#
# The instances read seat maps, availability and stream snapshots from the replica while
# it lags less than a second (BOXOFFICE_REPLICA_MAX_LAG_MS), from the primary otherwise;
# everything that decides a sale goes to the primary.
#
# The instances mint anonymous sessions (BOXOFFICE_ANONYMOUS_SESSIONS=true), as the buyer's
# page asks for them: one address is at most a few buyers with those
# (BOXOFFICE_SESSIONS_PER_ADDRESS), so the checks below that need many buyers of their own
# sign them in with the JWT secret, as a platform does (buyer_token).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
dir=${CLUSTER_DIR:-/tmp/boxoffice-cluster}
port=${CLUSTER_PORT:-8080}
bin=$root/target/release/boxoffice
instances=()
for ((i = 1; i <= ${CLUSTER_INSTANCES:-3}; i++)); do instances+=($((8180 + i))); done
stats_port=${CLUSTER_STATS_PORT:-8081}
cache_port=${CLUSTER_CACHE_PORT:-8082}
redis_ports=(7201 7202 7203)
replica_port=5433
sink_port=8190
primary=postgres://postgres@127.0.0.1:5432/${CLUSTER_DATABASE:-boxoffice_cluster}
pg_bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)

log() { printf '== %s\n' "$*"; }

# Starts "$@" in the background, its output in $dir/logs/<name>.log, its pid remembered.
spawn() {
  local name=$1
  shift
  "$@" >"$dir/logs/$name.log" 2>&1 &
  echo "$! $name" >>"$dir/pids"
  disown "$!" # no job notice when `test` kills it
}


up() {
  if [[ -s $dir/pids ]]; then
    echo "already up (deploy/cluster.sh down first)" >&2
    exit 1
  fi
  command -v haproxy >/dev/null || { echo "haproxy is missing: apt-get install haproxy" >&2; exit 1; }
  command -v nginx >/dev/null || { echo "nginx is missing: apt-get install nginx-light" >&2; exit 1; }
  mkdir -p "$dir/logs"
  : >"$dir/pids"
  bench_build
  export BOXOFFICE_ADMIN_TOKEN=${BOXOFFICE_ADMIN_TOKEN:-$(head -c 24 /dev/urandom | base64 | tr -dc A-Za-z0-9)}
  export BOXOFFICE_JWT_SECRET=${BOXOFFICE_JWT_SECRET:-$(head -c 24 /dev/urandom | base64 | tr -dc A-Za-z0-9)}
  export BOXOFFICE_WEBHOOK_SECRET=${BOXOFFICE_WEBHOOK_SECRET:-$(head -c 24 /dev/urandom | base64 | tr -dc A-Za-z0-9)}
  local store=${BOXOFFICE_HOLD_STORE:-redis}

  log "Redis Cluster on ${redis_ports[*]}"
  local nodes=()
  for p in "${redis_ports[@]}"; do
    mkdir -p "$dir/redis-$p"
    spawn "redis-$p" redis-server --port "$p" --bind 127.0.0.1 --cluster-enabled yes \
      --cluster-config-file "$dir/redis-$p/nodes.conf" --dir "$dir/redis-$p" \
      --save '' --appendonly no
    wait_for "redis $p" redis-cli -p "$p" ping
    nodes+=("127.0.0.1:$p")
  done
  redis-cli --cluster create "${nodes[@]}" --cluster-replicas 0 --cluster-yes >"$dir/logs/redis-create.log"
  wait_for "the cluster to serve every slot" sh -c "redis-cli -p ${redis_ports[0]} cluster info | grep -q cluster_state:ok"

  log "Postgres replica on $replica_port"
  # pg_basebackup connects for replication, which pg_hba.conf must allow from loopback.
  local hba
  hba=$(psql -h 127.0.0.1 -U postgres -Atc 'show hba_file')
  if ! grep -Eq '^host[[:space:]]+replication[[:space:]]+all[[:space:]]+127\.0\.0\.1/32' "$hba"; then
    echo "host replication all 127.0.0.1/32 trust  # added by boxoffice deploy/cluster.sh" >>"$hba"
    psql -h 127.0.0.1 -U postgres -qAtc 'select pg_reload_conf()' >/dev/null
  fi
  mkdir -p "$dir/replica"
  touch "$dir/logs/replica.log"
  chown postgres: "$dir/replica" "$dir/logs/replica.log" 2>/dev/null || true
  chmod 700 "$dir/replica"
  as_postgres "$pg_bin/pg_basebackup" -h 127.0.0.1 -p 5432 -U postgres -D "$dir/replica" -R -X stream -c fast
  # Debian keeps a cluster's configuration outside its data directory, so the copy has
  # none: the replica gets its own (-R wrote how to follow the primary into
  # postgresql.auto.conf).
  echo "hot_standby = on" >"$dir/replica/postgresql.conf"
  printf '%s\n' "local all all trust" "host all all 127.0.0.1/32 trust" >"$dir/replica/pg_hba.conf"
  chown postgres: "$dir/replica/postgresql.conf" "$dir/replica/pg_hba.conf" 2>/dev/null || true
  as_postgres "$pg_bin/pg_ctl" -D "$dir/replica" -l "$dir/logs/replica.log" \
    -o "-p $replica_port -k /tmp -c listen_addresses=127.0.0.1" start >/dev/null
  echo "$(head -n 1 "$dir/replica/postmaster.pid") replica" >>"$dir/pids"
  wait_for "the replica" psql -h 127.0.0.1 -p "$replica_port" -U postgres -Atc 'select pg_is_in_recovery()'

  log "Database $primary"
  "$bin" migrate --database-url "$primary" >"$dir/logs/migrate.log"

  log "three instances on ${instances[*]} (hold store: $store)"
  local servers=""
  for p in "${instances[@]}"; do
    DATABASE_URL=$primary BOXOFFICE_BIND=127.0.0.1:$p BOXOFFICE_HOLD_STORE=$store \
      BOXOFFICE_DATABASE_REPLICA_URL=${primary/5432/$replica_port} \
      REDIS_URL=$(IFS=,; echo "${nodes[*]/#/redis://}") BOXOFFICE_REDIS_CLUSTER=true \
      BOXOFFICE_REDIS_TIMEOUT_MS=${BOXOFFICE_REDIS_TIMEOUT_MS:-2000} \
      BOXOFFICE_ANONYMOUS_SESSIONS=true spawn "serve-$p" "$bin" serve
    servers+="    server s$p 127.0.0.1:$p check"$'\n'
  done
  for p in "${instances[@]}"; do
    wait_for "instance $p" curl -fsS "http://127.0.0.1:$p/readyz"
  done

  log "two outbox relays"
  local hooks=${BOXOFFICE_WEBHOOK_URLS:-}
  if [[ -z $hooks ]]; then
    spawn sink python3 -u -c '
import http.server, sys
class Sink(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        print(self.headers.get("boxoffice-delivery"), body.decode(errors="replace"), flush=True)
        self.send_response(200); self.end_headers()
    def log_message(self, *a): pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Sink).serve_forever()
' "$sink_port"
    hooks=http://127.0.0.1:$sink_port/
  fi
  for n in 1 2; do
    DATABASE_URL=$primary BOXOFFICE_WEBHOOK_URLS=$hooks spawn "relay-$n" "$bin" relay
  done

  log "nginx, the cache of waiting-room statuses, on 127.0.0.1:$cache_port"
  local origins=() p
  for p in "${instances[@]}"; do origins+=("127.0.0.1:$p"); done
  line_cache_conf "$dir" "$cache_port" "${origins[@]}"
  spawn nginx nginx -p "$dir" -c "$dir/nginx.conf"

  log "haproxy on 127.0.0.1:$port"
  cat >"$dir/haproxy.cfg" <<EOF
global
    # Two descriptors a connection (client and server side), within the usual limit of 20,000.
    maxconn 9000
defaults
    mode http
    timeout connect 2s
    timeout client 60s
    timeout server 60s
    # Live streams (Server-Sent Events) stay open: the server sends a comment every 15 s.
    timeout tunnel 1h
    # One request a connection, on both sides. With keep-alive towards the clients, a
    # client's next request on a connection whose last answer came from an instance that
    # has since died was lost without an answer or a log line (HAProxy 2.6, measured with
    # \`deploy/cluster.sh test\`: some 350 requests of a 2,000-buyer sale); closing after each
    # answer leaves only the requests in flight on the dead instance, each answered 502.
    option httpclose
    # A connection an instance refuses (it died) is tried again on another one. A request
    # already sent is not: only the client knows whether asking again is safe.
    retries 3
    option redispatch 1
frontend boxoffice
    bind 127.0.0.1:$port
    # A waiting room's status is the same bytes for every buyer until it changes: nginx's
    # cache answers the crowd (bench/lib.sh line_cache_conf).
    acl line_status path_reg ^/v1/events/[^/]+/queue/status\$
    use_backend line_cache if line_status
    default_backend instances
backend line_cache
    server cache 127.0.0.1:$cache_port
backend instances
    balance leastconn

    option httpchk GET /readyz
    http-check expect status 200
    default-server inter 1s fall 2 rise 2
$servers
listen stats
    bind 127.0.0.1:$stats_port
    stats enable
    stats uri /
EOF
  spawn haproxy haproxy -db -f "$dir/haproxy.cfg"
  wait_for "haproxy" curl -fsS "http://127.0.0.1:$port/healthz"

  cat <<EOF

Boxoffice cluster up: http://127.0.0.1:$port/ (API and seat-map page)
  admin token   $BOXOFFICE_ADMIN_TOKEN
  jwt secret    $BOXOFFICE_JWT_SECRET
  instances     ${instances[*]/#/127.0.0.1:}, balancer statistics on http://127.0.0.1:$stats_port/
  hold store    $store, Redis Cluster ${nodes[*]}
  Postgres      $primary, replica on 127.0.0.1:$replica_port
  relays        2, delivering to $hooks, signed with $BOXOFFICE_WEBHOOK_SECRET
  logs, pids    $dir
EOF
}

as_postgres() {
  if [[ $(id -u) == 0 ]]; then
    su postgres -s /bin/sh -c "$(printf '%q ' "$@")"
  else
    "$@"
  fi
}

status() {
  if [[ ! -s $dir/pids ]]; then
    echo "down"
    return
  fi
  while read -r pid name; do
    if kill -0 "$pid" 2>/dev/null; then state=running; else state=gone; fi
    printf '%-14s pid %-8s %s\n' "$name" "$pid" "$state"
  done <"$dir/pids"
  for p in "${instances[@]}"; do
    printf 'instance %s   /readyz %s\n' "$p" "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$p/readyz" || true)"
  done
  printf 'replica lag    %s\n' "$(psql -h 127.0.0.1 -U postgres -Atc \
    "select coalesce(max(replay_lag)::text, 'none') from pg_stat_replication" 2>/dev/null || echo unknown)"
}

down() {
  [[ -s $dir/pids ]] || { echo "nothing to stop"; return; }
  # The balancer first, then the instances and relays, then the stores.
  tac "$dir/pids" | while read -r pid name; do
    case $name in
      replica) as_postgres "$pg_bin/pg_ctl" -D "$dir/replica" stop -m fast >/dev/null 2>&1 || true ;;
      *) kill "$pid" 2>/dev/null || true ;;
    esac
  done
  sleep 1
  : >"$dir/pids"
  rm -rf "$dir/replica" "${redis_ports[@]/#/$dir/redis-}"
  echo "stopped"
}

# Checks the running cluster through the balancer; fails on the first check that fails.
check() {
  local url=http://127.0.0.1:$port
  local bench=("$bin" bench --url "$url" --admin-token "$BOXOFFICE_ADMIN_TOKEN"
    --jwt-secret "$BOXOFFICE_JWT_SECRET")
  # First, while the instances are cold: a crowd on one seat reaches several instances at
  # once, and none of them may answer a 503 turn.
  log "200 buyers on one seat, four times, their first answers: one 201 and 199 409, never a 503"
  "${bench[@]}" hot-seat --buyers 200 --rounds 4 --first-answers || return 1
  log "2,000 buyers on one seat"
  "${bench[@]}" hot-seat --buyers 2000 || return 1
  log "a flash sale"
  "${bench[@]}" flash-sale --seats 5000 --buyers 1000 --hold-ttl 5 || return 1

  log "a change made through one instance reaches a stream on another"
  local event token seen
  # The flash sale's event: the last one created.
  event=$(psql "$primary" -Atc 'select event_id from event order by created_at desc limit 1')
  # Compact snapshots name no seat: a seat's id on this stream can only come from a change.
  curl -sN "http://127.0.0.1:${instances[0]}/v1/events/$event/stream?snapshot=statuses" \
    >"$dir/stream.txt" &
  local stream=$!
  wait_for "the stream's snapshot" grep -q '^event: statuses' "$dir/stream.txt" || return 1
  token=$(curl -fsS -X POST "http://127.0.0.1:${instances[1]}/v1/sessions" | jq -r .token)
  local seat
  seat=$(curl -fsS "$url/v1/events/$event/seats" |
    jq -r '[.seats[] | select(.status == "available")][0].id')
  curl -fsS -X POST -H "authorization: Bearer $token" -H 'content-type: application/json' \
    -d "{\"seats\": [\"$seat\"]}" "http://127.0.0.1:${instances[1]}/v1/events/$event/holds" >/dev/null ||
    return 1
  seen=0
  wait_for "$seat held on the stream of ${instances[0]}" \
    grep -q "^data: .*\"$seat\".*\"held\"" "$dir/stream.txt" && seen=1
  kill "$stream" 2>/dev/null || true
  ((seen)) || { echo "the stream on ${instances[0]} never saw $seat held" >&2; return 1; }
  echo "seen: $seat held, on the stream of ${instances[0]}"

  log "the waiting room admits in one order, whichever instance is asked"
  "${bench[@]}" queue --buyers 2000 --admit-per-minute 6000 --duration 5s || return 1
  waiting_room_order "$event" || return 1
  log "a line's status is answered from the balancer's cache"
  line_status_cached "$event" || return 1

  if ((${#instances[@]} > 1)); then
    log "an instance killed (SIGKILL) mid-sale"
    instance_killed_mid_sale || return 1
  else
    echo "skipped: one instance, none to kill while another serves"
  fi

  log "seat maps while the replica is killed"
  (for _ in $(seq 1 60); do
    curl -s -o /dev/null -w '%{http_code}\n' "$url/v1/events/$event/seats"
    sleep 0.05
  done) >"$dir/reads.txt" &
  local reads=$!
  sleep 0.5
  kill -9 "$(head -n 1 "$dir/replica/postmaster.pid")" || return 1
  wait "$reads"
  sort "$dir/reads.txt" | uniq -c
  [[ $(grep -vc '^200$' "$dir/reads.txt") == 0 ]] || { echo "a read failed while the replica died" >&2; return 1; }
  echo "all cluster checks passed"
}

# Puts a waiting room admitting `rate` a minute, open from now, in front of `event`.
set_queue() { # event rate
  curl -fsS -X PATCH -H "authorization: Bearer $BOXOFFICE_ADMIN_TOKEN" \
    -H 'content-type: application/json' "$url/v1/events/$1" -d "{\"queue\": {
      \"enabled\": true, \"opens_at\": \"$(date -u +%FT%TZ)\", \"admit_per_minute\": $2,
      \"session_seconds\": 600, \"shuffle_at_open\": false}}" >/dev/null
}

# A user token for the buyer `$1`, signed with the JWT secret as a platform signs its
# buyers' (HS256, valid an hour).
buyer_token() { # user
  python3 - "$BOXOFFICE_JWT_SECRET" "$1" <<'PY'
import base64, hashlib, hmac, json, sys, time
b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=")
head = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
body = b64(json.dumps({"sub": sys.argv[2], "exp": int(time.time()) + 3600}).encode())
sig = b64(hmac.new(sys.argv[1].encode(), head + b"." + body, hashlib.sha256).digest())
print((head + b"." + body + b"." + sig).decode())
PY
}

# Twelve buyers join `event`'s line one after another, each through the next instance; each
# instance shows each ticket at the same place. Then the line admits one a second while the
# tickets are polled, last in line first, each sweep through one instance: whenever a ticket
# is seen admitted, every ticket ahead of it is too.
waiting_room_order() { # event
  local event=$1 n=12 i p ticket place
  set_queue "$event" 1 # nobody admitted for a minute
  # Every instance has heard of the change: word comes on the live bus at once, and no
  # instance keeps settings longer than 2 s (SETTINGS_KEPT in
  # crates/boxoffice-server/src/admission.rs) anyway.
  sleep 2.5
  local tokens=() tickets=()
  for ((i = 0; i < n; i++)); do
    tokens+=("$(buyer_token "line-$event-$i")")
    p=${instances[i % ${#instances[@]}]}
    tickets+=("$(curl -fsS -X POST -H "authorization: Bearer ${tokens[i]}" \
      "http://127.0.0.1:$p/v1/events/$event/queue" | jq -r '"\(.ticket) \(.position)"')")
  done
  for ((i = 0; i < n; i++)); do
    read -r ticket place <<<"${tickets[i]}"
    [[ $place == "$((i + 1))" ]] || { echo "buyer $i joined at place $place, not $((i + 1))" >&2; return 1; }
    tickets[i]=$ticket
    for p in "${instances[@]}"; do
      place=$(curl -fsS -H "authorization: Bearer ${tokens[i]}" \
        "http://127.0.0.1:$p/v1/events/$event/queue/$ticket" | jq -r .position)
      [[ $place == "$((i + 1))" ]] || { echo "instance $p shows buyer $i at place $place, not $((i + 1))" >&2; return 1; }
    done
  done
  echo "$n buyers at places 1-$n on every instance"
  set_queue "$event" 60
  local admitted sweeps=0 seen
  for _ in $(seq 1 100); do
    # Each sweep asks one instance (the next each time): an instance's view of the line
    # only moves forward; another's may be up to a second behind.
    p=${instances[sweeps % ${#instances[@]}]}
    seen=""
    for ((i = n - 1; i >= 0; i--)); do
      admitted=$(curl -fsS -H "authorization: Bearer ${tokens[i]}" \
        "http://127.0.0.1:$p/v1/events/$event/queue/${tickets[i]}" | jq -r .admitted)
      seen="$([[ $admitted == true ]] && echo 1 || echo 0)$seen"
    done
    sweeps=$((sweeps + 1))
    [[ $seen =~ ^1*0*$ ]] || { echo "admitted out of order: $seen (place 1 first)" >&2; return 1; }
    [[ $seen == *0* ]] || break
    sleep 0.3
  done
  [[ $seen != *0* ]] || { echo "not all admitted: $seen" >&2; return 1; }
  echo "all $n admitted in the order they joined ($sweeps sweeps, instance by instance)"
}

# Requests for waiting-room statuses the instances have answered, all together.
status_answers() {
  local p total=0 n
  for p in "${instances[@]}"; do
    n=$(curl -fsS "http://127.0.0.1:$p/metrics" |
      awk '/^http_requests_total\{/ && /route="\/v1\/events\/\{id\}\/queue\/status"/ { s += $NF } END { print s + 0 }')
    total=$((total + n))
  done
  echo "$total"
}

# Twenty buyers poll `event`'s status through the balancer for six seconds, as fast as they
# can: the instances must see at most one request per max-age (and one for the first).
line_status_cached() { # event
  local event=$1 before after polls max_age
  max_age=$(curl -fsS -D - -o /dev/null "$url/v1/events/$event/queue/status" |
    tr -d '\r' | sed -n 's/^cache-control: public, max-age=//Ip')
  [[ $max_age =~ ^[1-5]$ ]] || { echo "the status is not public for 1-5 s: '$max_age'" >&2; return 1; }
  sleep "$max_age"
  before=$(status_answers)
  local until=$((SECONDS + 6)) i
  for i in $(seq 1 20); do
    (n=0; while ((SECONDS < until)); do
      curl -fsS -o /dev/null "$url/v1/events/$event/queue/status" && n=$((n + 1))
    done; echo "$n") >"$dir/status-$i.txt" &
  done
  wait
  after=$(status_answers)
  polls=$(cat "$dir"/status-*.txt | awk '{ s += $1 } END { print s }')
  local origin=$((after - before)) allowed=$((6 / max_age + 2))
  echo "$polls status polls through the balancer in 6 s, $origin reached an instance (max-age $max_age s: at most $allowed)"
  ((polls > 100)) || { echo "too few polls to tell" >&2; return 1; }
  ((origin <= allowed)) || { echo "the cache let $origin of $polls through" >&2; return 1; }
}

# One of the balancer's counters for one instance (see haproxy's "show stat" fields).
balancer_stat() { # instance field
  curl -fsS "http://127.0.0.1:$stats_port/;csv" | awk -F, -v sv="s$1" -v f="$2" '
    NR == 1 { sub(/^# /, ""); for (i = 1; i <= NF; i++) if ($i == f) c = i; next }
    $1 == "instances" && $2 == sv { print $c + 0 }'
}

# A flash sale through the balancer; three seconds in, the last instance is killed with
# SIGKILL. The sale's own checks must pass (every order a buyer was told of is sold, no
# seat twice, no hold outlives its time), and the answers the buyers lost must be the
# requests that instance had in flight: the balancer's count of responses that instance
# never finished.
instance_killed_mid_sale() {
  local victim=${instances[-1]} others=("${instances[@]:0:${#instances[@]}-1}") p
  local before=() after=() i
  for p in "${instances[@]}"; do before+=("$(balancer_stat "$p" eresp)"); done
  "${bench[@]}" --json flash-sale --seats 5000 --buyers 2000 --think 1s --hold-ttl 5 \
    >"$dir/killed.json" &
  local sale=$!
  sleep 3
  kill -9 "$(awk -v n="serve-$victim" '$2 == n { print $1 }' "$dir/pids")"
  local result=0
  wait "$sale" || result=$?
  for p in "${instances[@]}"; do after+=("$(balancer_stat "$p" eresp)"); done
  jq -r '.checks[] | "\(if .passed then "ok  " else "FAIL" end) \(.name): \(.detail)"' "$dir/killed.json"
  ((result == 0)) || { echo "the sale's checks failed with an instance killed" >&2; return 1; }
  local lost unfinished=0
  # Lost: no answer, or the balancer's for a request it could not finish (502, 504). A 503
  # is an instance's own answer (its adaptive limit, with a turn), not a lost one.
  lost=$(jq '[.operations[].statuses | to_entries[] | select(.key == "0" or .key == "502" or .key == "504") | .value] | add // 0' "$dir/killed.json")
  for i in "${!instances[@]}"; do
    if ((${instances[i]} == victim)); then
      unfinished=$((after[i] - before[i]))
    elif ((after[i] != before[i])); then
      echo "instance ${instances[i]} left $((after[i] - before[i])) answers unfinished too" >&2
      return 1
    fi
  done
  jq -r '.operations[] | "\(.name): \(.statuses)"' "$dir/killed.json"
  echo "answers lost: $lost; requests in flight on $victim when it died: $unfinished"
  ((lost <= unfinished)) || { echo "the buyers lost more answers than $victim had in flight" >&2; return 1; }
  echo "${others[*]} served on"
}

case ${1:-} in
  up) up ;;
  down) down ;;
  status) status ;;
  test)
    if [[ ! -s $dir/pids ]]; then
      export BOXOFFICE_ADMIN_TOKEN=${BOXOFFICE_ADMIN_TOKEN:-cluster-test-admin}
      export BOXOFFICE_JWT_SECRET=${BOXOFFICE_JWT_SECRET:-cluster-test-secret}
      # Whatever happens from here, what `up` started is stopped again.
      trap down EXIT
      up
    fi
    : "${BOXOFFICE_ADMIN_TOKEN:?set BOXOFFICE_ADMIN_TOKEN and BOXOFFICE_JWT_SECRET to those of the running cluster}"
    : "${BOXOFFICE_JWT_SECRET:?set BOXOFFICE_JWT_SECRET}"
    result=0
    check || result=$?
    exit "$result"
    ;;
  *) echo "usage: $0 up|down|status|test" >&2; exit 2 ;;
esac
