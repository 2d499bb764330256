#!/usr/bin/env bash
# Boxoffice on a highly available Postgres, on this machine, from Debian packages only:
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
#
#   deploy/ha.sh up        installs what is missing (apt-get), starts all of it
#   deploy/ha.sh status    each process, each node's role and the synchronous standby
#   deploy/ha.sh failover kill-primary | kill-patroni | freeze | switchover
#                          one fault to the node that is primary now; returns at once
#                          (freeze: SIGSTOP until another node leads, then SIGCONT)
#   deploy/ha.sh heal      starts again any node whose Patroni is gone (it rejoins)
#   deploy/ha.sh down      stops exactly what `up` started and removes its data
#   deploy/ha.sh test      on each hold store (HA_STORES), each fault (HA_FAULTS) during a
#                          flash sale through the balancer, with a probe writing an order
#                          every 200 ms beside it; prints a table: the longest time with no
#                          order written, orders answered 201 and lost, the sale's failed
#                          checks (a seat sold twice, an order missing, a hold stuck), the
#                          primary before and after, the old node's role once healed and
#                          how long that took, and every answer by status (no 500)
#
# Settings from the environment: BOXOFFICE_ADMIN_TOKEN and BOXOFFICE_JWT_SECRET (generated
# and printed if unset), BOXOFFICE_HOLD_STORE (postgres), HA_PORT (18090), HA_INSTANCES
# (2), HA_DIR (/tmp/boxoffice-ha: pids, logs, each node's data). The machine's own Postgres
# is left alone: the nodes have their own ports and data directories.
#
# Patroni's timings are tuned for a failover in seconds (docs/operations.md, "High
# availability"): ttl 10 s, loop_wait 1 s, retry_timeout 4 s (ttl >= loop_wait + 2 *
# retry_timeout, as Patroni requires), and haproxy checks each node every 500 ms.
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

install() {
  local missing=()
  command -v patroni >/dev/null || missing+=(patroni)
  command -v etcd >/dev/null || missing+=(etcd-server)
  command -v etcdctl >/dev/null || missing+=(etcd-client)
  command -v haproxy >/dev/null || missing+=(haproxy)
  [[ -x $pg_bin/postgres ]] || missing+=(postgresql-15)
  if ((${#missing[@]})); then
    log "installing ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >"$dir/logs/apt.log"
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
    ttl: 10
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
  pg_hba:
    - local all all trust
    - host all all 127.0.0.1/32 trust
    - host replication all 127.0.0.1/32 trust
postgresql:
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
    patroni "$dir/n$n/patroni.yml"
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
  wait_for "the primary through haproxy" psql -h 127.0.0.1 -p "$write_port" -U postgres -Atc 'select 1'

  log "database $database"
  psql -h 127.0.0.1 -p "$write_port" -U postgres -qc "create database $database" 2>/dev/null || true
  "$bin" migrate --database-url "$primary_url" >"$dir/logs/migrate.log"

  log "${#instances[@]} instances on ${instances[*]} (hold store: $store)"
  for p in "${instances[@]}"; do
    DATABASE_URL=$primary_url BOXOFFICE_DATABASE_REPLICA_URL=$replica_url \
      BOXOFFICE_BIND=127.0.0.1:$p BOXOFFICE_HOLD_STORE=$store \
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
        patronictl -c "$dir/n$leader/patroni.yml" switchover --leader "n$leader" \
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
        patroni "$dir/n$n/patroni.yml"
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

# A flash sale through the balancer with one fault to the primary 1.5 s in, and the writes
# probe beside it; appends a line to $dir/table and fails on a broken promise.
sale_with_fault() { # store fault
  local store=$1 fault=$2 out=$dir/run-$1-$2
  log "$fault during a flash sale on the $store store"
  python3 "$root/deploy/faults_probe.py" "http://127.0.0.1:$port" --writes "$out.probe.json" &
  local probe=$!
  wait_for "the probe" test -e "$out.probe.json.ready"
  "$bin" bench --url "http://127.0.0.1:$port" --json flash-sale --seats 6000 --buyers 3000 \
    --think 2s --hold-ttl 10 --time-limit 60s >"$out.sale.json" &
  local sale=$!
  sleep 1.5
  local old
  old=$(node_answering primary)
  failover "$fault" >/dev/null
  local result=0
  wait "$sale" || result=$?
  kill -TERM "$probe"
  wait "$probe" || true
  heal >/dev/null
  local rejoin
  rejoin=$(settled) || rejoin=never
  local now role
  now=$(node_answering primary)
  role=$(curl -s --max-time 1 "http://127.0.0.1:$(rest_port "$old")/patroni" | jq -r .role)
  jq -r '.checks[] | "   \(if .passed then "ok  " else "FAIL" end) \(.name)"' "$out.sale.json"
  local answers
  answers=$(jq -s -c '[.[0].operations[].statuses, .[1].answers] | map(to_entries) | add
    | group_by(.key) | map({(.[0].key): (map(.value) | add)}) | add' "$out.sale.json" "$out.probe.json")
  printf '%-8s %-13s %6s %9s %9s %-8s %-10s %s\n' "$store" "$fault" \
    "$(jq -r .longest_without_s "$out.probe.json")" \
    "$(jq -r '"\(.lost)/\(.acknowledged)"' "$out.probe.json")" \
    "$(jq -r '[.checks[] | select(.passed | not)] | length' "$out.sale.json")" \
    "n$old>n$now" "$role ${rejoin}s" "$answers" | tee -a "$dir/table"
  ((result == 0)) || { echo "the sale's checks failed: $fault on the $store store" >&2; return 1; }
  jq -e '.lost == 0' "$out.probe.json" >/dev/null ||
    { echo "orders answered 201 and lost: $fault on the $store store" >&2; return 1; }
  if jq -e 'to_entries | map(.key | tonumber) | any(. >= 500 and . != 503)' <<<"$answers" >/dev/null; then
    echo "a 5xx other than 503: $fault on the $store store" >&2
    return 1
  fi
  # A primary whose Postgres alone was killed may be started again in place by its Patroni,
  # still holding the leader key (no failover): then it leads again, which is as safe.
  if [[ $role != replica && ! ($now == "$old" && $role == master) ]]; then
    echo "n$old neither leads nor rejoined as a replica after $fault" >&2
    return 1
  fi
}

# Each fault during a flash sale, on each hold store; the table of what each did.
test_all() {
  local stores=${HA_STORES:-postgres redis} faults=${HA_FAULTS:-kill-primary kill-patroni freeze switchover}
  local failed=0 store fault
  [[ -s $dir/pids ]] && down >/dev/null
  mkdir -p "$dir"
  : >"$dir/table"
  for store in $stores; do
    BOXOFFICE_HOLD_STORE=$store up >/dev/null
    for fault in $faults; do
      sale_with_fault "$store" "$fault" || failed=1
    done
    down >/dev/null
  done
  echo
  printf '%-8s %-13s %6s %9s %9s %-8s %-10s %s\n' store fault "no-write" "lost/201" "checks" primary "old node" answers
  cat "$dir/table"
  ((failed == 0)) || { echo "some fault broke a promise (above)" >&2; return 1; }
  echo "every fault: no order answered 201 lost, no seat sold twice, no 500, the old primary a replica again"
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
