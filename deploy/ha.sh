#!/usr/bin/env bash
# Boxoffice on a highly available Postgres, on this machine (Debian's packages, and
# Patroni pinned from PyPI: see patroni_version below):
#
#   haproxy on 127.0.0.1:$HA_PORT (18090)        the instances, health-checked on /readyz
#     -> $HA_INSTANCES (two) instances           127.0.0.1:18091, 18092, ...
#   haproxy on 127.0.0.1:15440 (writes)          whichever node answers Patroni's /primary
#           and 127.0.0.1:15439 (reads)          the nodes that answer /replica
#   Patroni, three nodes of PostgreSQL 15        127.0.0.1:15441-15443 (REST 18441-18443),
#                                                synchronous_mode and synchronous_mode_strict
#   etcd, three members                          clients 127.0.0.1:12379, 22379, 32379
#   the hold store: $BOXOFFICE_HOLD_STORE        postgres (the default), or redis on the
#                                                machine's Redis (REDIS_URL)
#   a webhook sink on 127.0.0.1:18189            each instance relays the outbox there
#                                                (unless BOXOFFICE_WEBHOOK_URLS says where)
#
#   deploy/ha.sh up        installs what is missing (apt-get, pip), starts all of it
#   deploy/ha.sh status    each process, each node's role and the synchronous standby
#   deploy/ha.sh failover kill-primary | kill-patroni | freeze | switchover
#                          one fault to the node that is primary now; returns at once
#                          (freeze: SIGSTOP until another node leads, then SIGCONT)
#   deploy/ha.sh heal      starts again any node whose Patroni is gone (it rejoins)
#   deploy/ha.sh down      stops exactly what `up` started and removes its data
#   deploy/ha.sh test      on each hold store (HA_STORES), each fault (HA_FAULTS) during a
#                          flash sale through the balancer, with two probes beside it (an
#                          order every 200 ms, a hold every 100 ms); prints a table:
#                            failover     seconds from the fault until a primary took
#                                         writes through haproxy again
#                            sales        the longest time between two orders committed
#                                         during the sale (s), as Postgres has them
#                            probe        the longest time the probe, one buyer among the
#                                         crowd, had no order answered 201 (s)
#                            lost/201     orders answered 201 that are gone / answered
#                            cut:retried  checkouts cut by the fault (no answer or 503),
#                                         and what asking again with the same hold token
#                                         gave (its one order, or 409: no order, no hold)
#                            holds        holds answered 201 that are gone / answered (the
#                                         postgres store commits holds asynchronously: a
#                                         failover may lose a few; never an order)
#                            outbox       rows the webhook sink never received / rows
#                                         left undelivered, and the seconds until none was
#                            checks       the sale's failed checks (a seat sold twice, an
#                                         order missing, a hold stuck)
#                            primary      before > after; old node: its role once healed
#                                         and the seconds until all three ran again
#                            answers      every answer of the sale and the probe, by status
#                          and fails on a broken promise (any of those, a 5xx but 503, the
#                          old primary neither a replica nor leading again)
#
# Settings from the environment: BOXOFFICE_ADMIN_TOKEN and BOXOFFICE_JWT_SECRET (generated
# and printed if unset), BOXOFFICE_HOLD_STORE (postgres), HA_PORT (18090), HA_INSTANCES
# (2), HA_DIR (/tmp/boxoffice-ha: pids, logs, each node's data). The machine's own Postgres
# is left alone: the nodes have their own ports and data directories.
#
# Patroni's timings are tuned for a failover in seconds (docs/operations.md, "High
# availability"): ttl 20 s (the least Patroni 4 takes), loop_wait 1 s, retry_timeout 4 s
# (ttl >= loop_wait + 2 * retry_timeout, as Patroni requires), and haproxy checks each
# node every 500 ms.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
dir=${HA_DIR:-/tmp/boxoffice-ha}
port=${HA_PORT:-18090}
bin=$root/target/release/boxoffice
nodes=(1 2 3)
pg_port() { echo $((15440 + $1)); }
rest_port() { echo $((18440 + $1)); }
etcd_client() { echo $(($1 * 10000 + 2379)); }
etcd_peer() { echo $(($1 * 10000 + 2380)); }
write_port=15440
read_port=15439
stats_port=18440
sink_port=18189
instances=()
for ((i = 1; i <= ${HA_INSTANCES:-2}; i++)); do instances+=($((port + i))); done
pg_bin=/usr/lib/postgresql/15/bin
database=boxoffice_ha
primary_url=postgres://postgres@127.0.0.1:$write_port/$database
replica_url=postgres://postgres@127.0.0.1:$read_port/$database

log() { printf '== %s\n' "$*"; }

# Starts "$@" in the background, its output in $dir/logs/<name>.log, its pid remembered.
spawn() {
  local name=$1
  shift
  "$@" >>"$dir/logs/$name.log" 2>&1 &
  echo "$! $name" >>"$dir/pids"
  disown "$!"
}

# Patroni from PyPI, pinned, in a virtual environment of its own: Debian bookworm's 3.0.2
# lets a primary that was frozen and then resumed write the leader key over the node
# promoted meanwhile (two primaries for a second, then a stale /sync key that stops every
# later failover in strict mode); upstream fixed both in 3.1 and 3.2.
patroni_version=4.1.5
venv=${HA_PATRONI_VENV:-/opt/boxoffice-ha-patroni}
patroni=$venv/bin/patroni
patronictl=$venv/bin/patronictl

install() {
  local missing=()
  command -v etcd >/dev/null || missing+=(etcd-server)
  command -v etcdctl >/dev/null || missing+=(etcd-client)
  command -v haproxy >/dev/null || missing+=(haproxy)
  /usr/bin/python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || missing+=(python3-venv)
  [[ -x $pg_bin/postgres ]] || missing+=(postgresql-15)
  if ((${#missing[@]})); then
    log "installing ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >"$dir/logs/apt.log"
  fi
  if [[ $("$patroni" --version 2>/dev/null) != "patroni $patroni_version" ]]; then
    log "installing Patroni $patroni_version in $venv"
    # Debian's own Python: Patroni runs as postgres, who may not read another one.
    /usr/bin/python3 -m venv "$venv"
    "$venv/bin/pip" install -q "patroni[etcd3]==$patroni_version" psycopg2-binary==2.9.13 >"$dir/logs/pip.log"
  fi
}

etcd_member() { # n
  local n=$1 cluster="" m
  for m in "${nodes[@]}"; do cluster+="e$m=http://127.0.0.1:$(etcd_peer "$m"),"; done
  mkdir -p "$dir/etcd$n"
  spawn "etcd$n" etcd --name "e$n" --data-dir "$dir/etcd$n" \
    --listen-client-urls "http://127.0.0.1:$(etcd_client "$n")" \
    --advertise-client-urls "http://127.0.0.1:$(etcd_client "$n")" \
    --listen-peer-urls "http://127.0.0.1:$(etcd_peer "$n")" \
    --initial-advertise-peer-urls "http://127.0.0.1:$(etcd_peer "$n")" \
    --initial-cluster "${cluster%,}" --initial-cluster-state new \
    --initial-cluster-token boxoffice-ha
}

# The configuration of Patroni node n.
patroni_conf() { # n
  local n=$1 hosts="" m
  for m in "${nodes[@]}"; do hosts+="127.0.0.1:$(etcd_client "$m"),"; done
  cat <<EOF
scope: boxoffice
name: n$n
log:
  level: INFO
restapi:
  listen: 127.0.0.1:$(rest_port "$n")
  connect_address: 127.0.0.1:$(rest_port "$n")
etcd3:
  hosts: ${hosts%,}
bootstrap:
  dcs:
    ttl: 20
    loop_wait: 1
    retry_timeout: 4
    # A primary that crashed is not restarted in place first: the synchronous standby
    # takes over at once.
    primary_start_timeout: 0
    synchronous_mode: true
    synchronous_mode_strict: true
    postgresql:
      use_pg_rewind: true
      use_slots: true
      parameters:
        max_connections: 200
        wal_log_hints: 'on'
        synchronous_commit: 'on'
        wal_keep_size: 256MB
  initdb:
    - encoding: UTF8
    - locale: C.UTF-8
postgresql:
  pg_hba:
    - local all all trust
    - host all all 127.0.0.1/32 trust
    - host replication all 127.0.0.1/32 trust
  listen: 127.0.0.1:$(pg_port "$n")
  connect_address: 127.0.0.1:$(pg_port "$n")
  data_dir: $dir/n$n/data
  bin_dir: $pg_bin
  pgpass: $dir/n$n/pgpass
  authentication:
    superuser:
      username: postgres
    replication:
      username: replicator
      password: replicator
    rewind:
      username: postgres
  parameters:
    unix_socket_directories: $dir/n$n
EOF
}

patroni_node() { # n
  local n=$1
  mkdir -p "$dir/n$n"
  patroni_conf "$n" >"$dir/n$n/patroni.yml"
  chown -R postgres: "$dir/n$n"
  chmod 700 "$dir/n$n"
  touch "$dir/logs/patroni$n.log"
  chown postgres: "$dir/logs/patroni$n.log"
  # setpriv execs Patroni itself: the pid remembered is Patroni's.
  spawn "patroni$n" setpriv --reuid=postgres --regid=postgres --init-groups \
    "$patroni" "$dir/n$n/patroni.yml"
}

# The node whose REST API answers 200 on `$1` (primary, replica, sync); empty if none.
node_answering() { # check
  local n
  for n in "${nodes[@]}"; do
    if [[ $(curl -s --max-time 1 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$(rest_port "$n")/$1") == 200 ]]; then
      echo "$n"
      return
    fi
  done
}

# Whether haproxy's write port sends to the primary and to no other node.
writes_to_primary_alone() {
  local primary up
  primary=$(node_answering primary)
  [[ -n $primary ]] || return 1
  up=$(curl -s --max-time 1 "http://127.0.0.1:$stats_port/;csv" |
    awk -F, '$1 == "postgres_write" && $2 ~ /^n[0-9]$/ && $18 ~ /^UP/ { print $2 }')
  [[ $up == "n$primary" ]] || return 1
  [[ $(psql -h 127.0.0.1 -p "$write_port" -U postgres -Atc 'select pg_is_in_recovery()' 2>/dev/null) == f ]]
}

up() {
  if [[ -s $dir/pids ]]; then
    echo "already up (deploy/ha.sh down first)" >&2
    exit 1
  fi
  mkdir -p "$dir/logs"
  : >"$dir/pids"
  install
  bench_build
  export BOXOFFICE_ADMIN_TOKEN=${BOXOFFICE_ADMIN_TOKEN:-$(head -c 24 /dev/urandom | base64 | tr -dc A-Za-z0-9)}
  export BOXOFFICE_JWT_SECRET=${BOXOFFICE_JWT_SECRET:-$(head -c 24 /dev/urandom | base64 | tr -dc A-Za-z0-9)}
  local store=${BOXOFFICE_HOLD_STORE:-postgres} n

  log "etcd, three members"
  for n in "${nodes[@]}"; do etcd_member "$n"; done
  wait_for "etcd's quorum" etcdctl --endpoints "127.0.0.1:$(etcd_client 1)" endpoint health

  log "Patroni, three nodes of PostgreSQL 15"
  for n in "${nodes[@]}"; do patroni_node "$n"; done
  wait_for "a primary" sh -c "[ -n \"\$(bash '$0' _primary)\" ]"
  wait_for "a synchronous standby" sh -c "[ -n \"\$(bash '$0' _sync)\" ]"

  log "haproxy: writes on $write_port, reads on $read_port"
  local writes="" reads="" servers=""
  for n in "${nodes[@]}"; do
    writes+="    server n$n 127.0.0.1:$(pg_port "$n") check port $(rest_port "$n")"$'\n'
  done
  reads=$writes
  for p in "${instances[@]}"; do servers+="    server s$p 127.0.0.1:$p check"$'\n'; done
  cat >"$dir/haproxy.cfg" <<EOF
global
    maxconn 4000
defaults
    timeout connect 2s
    # A pooled connection may idle a long time; the server's own keepalive closes it.
    timeout client 30m
    timeout server 30m
# Postgres, to whichever node Patroni says leads. A node that stops answering /primary is
# out within a second, and its connections are cut, so pooled connections cannot go on
# writing to a demoted node.
listen postgres_write
    bind 127.0.0.1:$write_port
    mode tcp
    option httpchk GET /primary
    http-check expect status 200
    default-server inter 500ms fall 2 rise 1 on-marked-down shutdown-sessions
$writes
listen postgres_read
    bind 127.0.0.1:$read_port
    mode tcp
    balance leastconn
    option httpchk GET /replica
    http-check expect status 200
    default-server inter 500ms fall 2 rise 1 on-marked-down shutdown-sessions
$reads
frontend boxoffice
    mode http
    bind 127.0.0.1:$port
    option httpclose
    timeout client 60s
    default_backend instances
backend instances
    mode http
    balance leastconn
    option httpclose
    timeout server 60s
    retries 3
    option redispatch 1
    option httpchk GET /readyz
    http-check expect status 200
    default-server inter 1s fall 2 rise 2
$servers
listen stats
    mode http
    bind 127.0.0.1:$stats_port
    stats enable
    stats uri /
EOF
  spawn haproxy haproxy -db -f "$dir/haproxy.cfg"
  # haproxy counts every server up until its checks say otherwise: until they have, a
  # connection to the write port may reach a standby.
  wait_for "haproxy to write to the primary alone" writes_to_primary_alone

  log "database $database"
  psql -h 127.0.0.1 -p "$write_port" -U postgres -qc "create database $database" 2>/dev/null || true
  "$bin" migrate --database-url "$primary_url" >"$dir/logs/migrate.log"

  # Each instance relays the outbox; the default organization's rows go to this sink,
  # which logs each delivery's id (what `test` checks against the outbox).
  local hooks=${BOXOFFICE_WEBHOOK_URLS:-}
  export BOXOFFICE_WEBHOOK_SECRET=${BOXOFFICE_WEBHOOK_SECRET:-ha-webhooks}
  if [[ -z $hooks ]]; then
    : >"$dir/sink.log"
    spawn sink python3 -u -c '
import http.server, sys
log = open(sys.argv[2], "a")
class Sink(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", 0)))
        log.write(self.headers.get("boxoffice-delivery", "") + "\n")
        log.flush()
        self.send_response(200)
        self.end_headers()
    def log_message(self, *a): pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Sink).serve_forever()
' "$sink_port" "$dir/sink.log"
    hooks=http://127.0.0.1:$sink_port/
  fi

  log "${#instances[@]} instances on ${instances[*]} (hold store: $store)"
  for p in "${instances[@]}"; do
    DATABASE_URL=$primary_url BOXOFFICE_DATABASE_REPLICA_URL=$replica_url \
      BOXOFFICE_WEBHOOK_URLS=$hooks BOXOFFICE_BIND=127.0.0.1:$p BOXOFFICE_HOLD_STORE=$store \
      REDIS_URL=${REDIS_URL:-redis://127.0.0.1:6379} \
      BOXOFFICE_ANONYMOUS_SESSIONS=true spawn "serve-$p" "$bin" serve
  done
  for p in "${instances[@]}"; do
    wait_for "instance $p" curl -fsS "http://127.0.0.1:$p/readyz"
  done
  wait_for "the balancer" curl -fsS "http://127.0.0.1:$port/healthz"

  cat <<EOF

Boxoffice on Patroni up: http://127.0.0.1:$port/
  admin token   $BOXOFFICE_ADMIN_TOKEN
  jwt secret    $BOXOFFICE_JWT_SECRET
  Postgres      writes $primary_url, reads $replica_url
  primary       node n$(node_answering primary), synchronous standby n$(node_answering sync)
  hold store    $store
  webhooks      $hooks (each instance relays the outbox)
  logs, pids    $dir
EOF
}

status() {
  if [[ ! -s $dir/pids ]]; then
    echo "down"
    return
  fi
  local pid name state n
  while read -r pid name; do
    if kill -0 "$pid" 2>/dev/null; then state=running; else state=gone; fi
    printf '%-14s pid %-8s %s\n' "$name" "$pid" "$state"
  done <"$dir/pids"
  for n in "${nodes[@]}"; do
    printf 'node n%s        %s\n' "$n" "$(curl -s --max-time 1 "http://127.0.0.1:$(rest_port "$n")/patroni" |
      jq -rc '"\(.role) \(.state) timeline \(.timeline)"' 2>/dev/null || echo unreachable)"
  done
  printf 'synchronous    n%s\n' "$(node_answering sync)"
  for p in "${instances[@]}"; do
    printf 'instance %s   /readyz %s\n' "$p" "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$p/readyz" || true)"
  done
}

# The pids of node n's Postgres: the postmaster and its children.
postgres_pids() { # n
  local main
  main=$(head -n 1 "$dir/n$1/data/postmaster.pid" 2>/dev/null) || return 0
  echo "$main" $(pgrep -P "$main" || true)
}

patroni_pid() { # n
  pgrep -f "patroni $dir/n$1/patroni.yml" | head -n 1
}

failover() { # kind
  local kind=${1:-} leader candidate
  leader=$(node_answering primary)
  [[ -n $leader ]] || { echo "no primary now" >&2; exit 1; }
  case $kind in
    kill-primary)
      kill -9 $(head -n 1 "$dir/n$leader/data/postmaster.pid")
      ;;
    kill-patroni)
      kill -9 "$(patroni_pid "$leader")" $(postgres_pids "$leader")
      ;;
    freeze)
      local frozen
      frozen="$(patroni_pid "$leader") $(postgres_pids "$leader")"
      kill -STOP $frozen
      # Let it go once another node leads: it finds itself demoted and rejoins.
      (
        for _ in $(seq 600); do
          now=$(node_answering primary)
          if [[ -n $now && $now != "$leader" ]]; then break; fi
          sleep 0.2
        done
        kill -CONT $frozen 2>/dev/null || true
      ) >/dev/null 2>&1 &
      disown
      ;;
    switchover)
      candidate=$(node_answering sync)
      setpriv --reuid=postgres --regid=postgres --init-groups \
        "$patronictl" -c "$dir/n$leader/patroni.yml" switchover --primary "n$leader" \
        --candidate "n$candidate" --force >"$dir/logs/switchover.log" 2>&1 &
      disown
      ;;
    *)
      echo "usage: deploy/ha.sh failover kill-primary | kill-patroni | freeze | switchover" >&2
      exit 2
      ;;
  esac
  echo "n$leader: $kind"
}

heal() {
  local n
  for n in "${nodes[@]}"; do
    if [[ -z $(patroni_pid "$n") ]]; then
      log "node n$n starts again"
      spawn "patroni$n" setpriv --reuid=postgres --regid=postgres --init-groups \
        "$patroni" "$dir/n$n/patroni.yml"
    fi
  done
}

down() {
  [[ -s $dir/pids ]] || { echo "nothing to stop"; return; }
  local n pid name
  for n in "${nodes[@]}"; do kill -CONT $(patroni_pid "$n") $(postgres_pids "$n") 2>/dev/null || true; done
  # The balancers and instances first, then Patroni (which stops its Postgres), then etcd.
  tac "$dir/pids" | while read -r pid name; do kill "$pid" 2>/dev/null || true; done
  for _ in $(seq 50); do
    local left=0
    for n in "${nodes[@]}"; do [[ -n $(patroni_pid "$n") ]] && left=1; done
    ((left)) || break
    sleep 0.2
  done
  for n in "${nodes[@]}"; do
    kill -9 $(patroni_pid "$n") $(postgres_pids "$n") 2>/dev/null || true
  done
  for _ in $(seq 50); do
    pgrep -f "etcd --name e[123] --data-dir $dir" >/dev/null || break
    sleep 0.1
  done
  pkill -9 -f "etcd --name e[123] --data-dir $dir" 2>/dev/null || true
  : >"$dir/pids"
  rm -rf "$dir"/n? "$dir"/etcd?
  echo "stopped"
}

# Waits until every node runs again, one of them primary and one the synchronous standby;
# the seconds it took, or fails after a minute.
settled() {
  local began=$SECONDS n ok
  for _ in $(seq 300); do
    ok=1
    for n in "${nodes[@]}"; do
      curl -s --max-time 1 "http://127.0.0.1:$(rest_port "$n")/patroni" |
        jq -e '.state == "running"' >/dev/null 2>&1 || ok=0
    done
    if ((ok)) && [[ -n $(node_answering primary) && -n $(node_answering sync) ]]; then
      echo $((SECONDS - began))
      return 0
    fi
    sleep 0.2
  done
  return 1
}

# Waits until the outbox has nothing undelivered (a row whose delivery the fault cut waits
# out its relay's lease, 50 s at most), then prints "<undelivered> <missing> <seconds>":
# rows never marked delivered, rows the sink never received, and how long it took.
outbox_delivered() { # out
  local out=$1 began=$SECONDS left=
  for _ in $(seq 600); do
    left=$(psql -h 127.0.0.1 -p "$write_port" -U postgres -d "$database" -Atc \
      "select count(*) from outbox where delivered_at is null" 2>/dev/null) || left=
    [[ $left == 0 ]] && break
    sleep 0.2
  done
  psql -h 127.0.0.1 -p "$write_port" -U postgres -d "$database" -Atc \
    "select outbox_id from outbox order by 1" | sort -u >"$out.outbox"
  sort -u "$dir/sink.log" >"$out.delivered"
  echo "${left:-?} $(comm -23 "$out.outbox" "$out.delivered" | wc -l) $((SECONDS - began))"
}

# Seconds from now until a primary writes through haproxy again: another node than `old`,
# or `old` itself after it stopped answering as primary (its Patroni started it again in
# place); "never" after two minutes.
failover_seconds() { # old
  local old=$1 began down=0 p
  began=$(date +%s%N)
  for _ in $(seq 600); do
    p=$(node_answering primary)
    if [[ -z $p ]]; then
      down=1
    elif [[ $p != "$old" || $down == 1 ]] &&
      [[ $(timeout 1 psql -h 127.0.0.1 -p "$write_port" -U postgres -d "$database" -Atc \
        'select pg_is_in_recovery()' 2>/dev/null) == f ]]; then
      awk -v ns=$(($(date +%s%N) - began)) 'BEGIN { printf "%.1f\n", ns / 1e9 }'
      return
    fi
    sleep 0.2
  done
  echo never
}

# A flash sale through the balancer with one fault to the primary 5 s in, and two probes
# beside it (an order every 200 ms, a hold every 100 ms); appends a line to $dir/table and
# fails on a broken promise.
sale_with_fault() { # store fault
  local store=$1 fault=$2 out=$dir/run-$1-$2
  log "$fault during a flash sale on the $store store"
  python3 "$root/deploy/faults_probe.py" "http://127.0.0.1:$port" --writes "$out.probe.json" &
  local probe=$!
  python3 "$root/deploy/faults_probe.py" "http://127.0.0.1:$port" "$out.holds.json" &
  local holds=$!
  wait_for "the probes" test -e "$out.probe.json.ready" -a -e "$out.holds.json.ready"
  local since
  since=$(psql -h 127.0.0.1 -p "$write_port" -U postgres -d "$database" -Atc "select now()")
  "$bin" bench --url "http://127.0.0.1:$port" --json flash-sale --seats 6000 --buyers 3000 \
    --think 2s --hold-ttl 10 --time-limit 60s >"$out.sale.json" &
  local sale=$!
  # Five seconds in: buyers are holding and checking out.
  sleep 5
  local old fault_at
  old=$(node_answering primary)
  fault_at=$(date -u '+%Y-%m-%d %H:%M:%S.%N+00')
  failover "$fault" >/dev/null
  failover_seconds "$old" >"$out.failover" &
  local watch=$!
  local result=0
  wait "$sale" || result=$?
  wait "$watch" || true
  kill -TERM "$probe" "$holds"
  wait "$probe" "$holds" || true
  heal >/dev/null
  local rejoin
  rejoin=$(settled) || rejoin=never
  local now role outbox
  now=$(node_answering primary)
  role=$(curl -s --max-time 1 "http://127.0.0.1:$(rest_port "$old")/patroni" | jq -r .role)
  outbox=$(outbox_delivered "$out")
  # The longest time between two orders committed during the sale (every buyer's, as
  # Postgres has them), the fault's moment counted as one: when sales stopped and came back.
  local sales_gap
  sales_gap=$(psql -h 127.0.0.1 -p "$write_port" -U postgres -d "$database" -Atc "
    select coalesce(round(extract(epoch from max(d))::numeric, 1), 0)
      from (select t - lag(t) over (order by t) as d
              from (select created_at as t from ticket_order where created_at >= '$since'
                    union all select '$fault_at'::timestamptz) moments) gaps")
  jq -r '.checks[] | "   \(if .passed then "ok  " else "FAIL" end) \(.name)"' "$out.sale.json"
  local answers
  answers=$(jq -s -c '[.[0].operations[].statuses, .[1].answers] | map(to_entries) | add
    | group_by(.key) | map({(.[0].key): (map(.value) | add)}) | add' "$out.sale.json" "$out.probe.json")
  printf '%-8s %-13s %8s %6s %6s %9s %-12s %6s %10s %6s %-8s %-10s %s\n' "$store" "$fault" \
    "$(cat "$out.failover")" "$sales_gap" "$(jq -r .longest_without_s "$out.probe.json")" \
    "$(jq -r '"\(.lost)/\(.acknowledged)"' "$out.probe.json")" \
    "$(jq -r 'if .cut == 0 then "0" else "\(.cut): \(.retried | to_entries | map("\(.value)x\(.key)") | join(","))" end' "$out.probe.json")" \
    "$(jq -r '"\(.lost)/\(.acknowledged)"' "$out.holds.json")" \
    "$(awk '{print $2 "/" $1 " " $3 "s"}' <<<"$outbox")" \
    "$(jq -r '[.checks[] | select(.passed | not)] | length' "$out.sale.json")" \
    "n$old>n$now" "$role ${rejoin}s" "$answers" | tee -a "$dir/table"
  local broken=()
  ((result == 0)) || broken+=("the sale's checks failed")
  jq -e '.lost == 0' "$out.probe.json" >/dev/null || broken+=("orders answered 201 and lost")
  jq -e '.twice_wrong == []' "$out.probe.json" >/dev/null ||
    broken+=("a hold token checked out again did not answer its one order: $(jq -c .twice_wrong "$out.probe.json")")
  jq -e '.sold_unknown == []' "$out.probe.json" >/dev/null ||
    broken+=("seats sold under orders no client was told of: $(jq -c .sold_unknown "$out.probe.json")")
  # Holds on Redis do not live in Postgres: a failover loses none of them.
  if [[ $store == redis ]] && ! jq -e '.lost == 0' "$out.holds.json" >/dev/null; then
    broken+=("holds on Redis lost: $(jq -r .lost "$out.holds.json")")
  fi
  if jq -e 'to_entries | map(.key | tonumber) | any(. >= 500 and . != 503)' <<<"$answers" >/dev/null; then
    broken+=("a 5xx other than 503")
  fi
  read -r undelivered missing _ <<<"$outbox"
  [[ $undelivered == 0 && $missing == 0 ]] ||
    broken+=("outbox rows undelivered: $undelivered, never received: $missing")
  # A primary whose Postgres alone was killed may be started again in place by its Patroni,
  # still holding the leader key (no failover): then it leads again, which is as safe.
  local took
  took=$(cat "$out.failover")
  if [[ $took == never ]] || ! awk -v s="$took" 'BEGIN { exit !(s < 30) }'; then
    broken+=("no primary took writes within 30 s ($took)")
  fi
  if [[ $role != replica && ! ($now == "$old" && $role == primary) ]]; then
    broken+=("n$old neither leads nor rejoined as a replica")
  fi
  local b
  for b in "${broken[@]}"; do echo "$fault on the $store store: $b" >&2; done
  ((${#broken[@]} == 0))
}

# Each fault during a flash sale, on each hold store; the table of what each did.
test_all() {
  local stores=${HA_STORES:-postgres redis} faults=${HA_FAULTS:-kill-primary kill-patroni freeze switchover}
  local failed=0 store fault
  [[ -s $dir/pids ]] && down >/dev/null
  mkdir -p "$dir"
  : >"$dir/table"
  # Whatever stops the test, nothing it started is left running.
  trap 'down >/dev/null 2>&1 || true' EXIT
  for store in $stores; do
    BOXOFFICE_HOLD_STORE=$store up >/dev/null
    for fault in $faults; do
      sale_with_fault "$store" "$fault" || failed=1
    done
    down >/dev/null
  done
  echo
  printf '%-8s %-13s %8s %6s %6s %9s %-12s %6s %10s %6s %-8s %-10s %s\n' store fault failover "sales" "probe" "lost/201" "cut:retried" "holds" "outbox" "checks" primary "old node" answers
  cat "$dir/table"
  ((failed == 0)) || { echo "some fault broke a promise (above)" >&2; return 1; }
  echo "every fault: no order answered 201 lost, a cut checkout retried gave one order, no seat"
  echo "sold twice, no hold stuck, every outbox row delivered, no 500, the old primary a replica again"
}

case ${1:-} in
  up) up ;;
  test) test_all ;;
  status) status ;;
  failover) failover "${2:-}" ;;
  heal) heal ;;
  down) down ;;
  _primary) node_answering primary ;;
  _sync) node_answering sync ;;
  *)
    echo "usage: deploy/ha.sh up | status | failover <kind> | heal | down | test" >&2
    exit 2
    ;;
esac
