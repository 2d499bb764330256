#!/usr/bin/env bash
# The OpenAPI document against the server it describes: schemathesis (PyPI) with every
# check, as an admin and as a buyer, against target/debug/boxoffice on a fresh database.
# Fails on any finding. Needs Postgres (and nothing else: holds in Postgres, no Redis).
#   tests/schemathesis/run.sh [max examples per operation, default 40]
set -euo pipefail
cd "$(dirname "$0")/../.."
examples=${1:-40}
version=4.32.5
venv=target/schemathesis-$version
if [[ ! -x $venv/bin/schemathesis ]]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "schemathesis==$version"
fi
cargo build -q --bin boxoffice
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
db=schemathesis_$$
export BOXOFFICE_ADMIN_TOKEN=admin-$$ BOXOFFICE_JWT_SECRET=secret-$$
target/debug/boxoffice serve --bind 127.0.0.1:"$port" \
  --database-url "postgres://postgres@127.0.0.1:5432/$db" --holds-per-minute 0 \
  >"target/schemathesis-server.log" 2>&1 &
server=$!
cleanup() {
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  psql -q -h 127.0.0.1 -U postgres -c "drop database if exists $db with (force)" || true
}
trap cleanup EXIT
for _ in $(seq 200); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.1; done
BOXOFFICE_USER_TOKEN=$(python3 - <<'PY'
import base64, hashlib, hmac, json, os, time
b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=")
head = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
body = b64(json.dumps({"sub": "schemathesis", "exp": int(time.time()) + 3600}).encode())
key = os.environ["BOXOFFICE_JWT_SECRET"].encode()
print((head + b"." + body + b"." + b64(hmac.new(key, head + b"." + body, hashlib.sha256).digest())).decode())
PY
)
export BOXOFFICE_USER_TOKEN
api() { # method path body
  curl -fsS -X "$1" -H "authorization: Bearer $BOXOFFICE_ADMIN_TOKEN" \
    -H 'content-type: application/json' -d "$3" "http://127.0.0.1:$port$2"
}
venue=$(api POST /v1/venues '{"name": "Hall", "sections": [{"id": "stalls", "name": "Stalls",
  "rows": [{"label": "A", "seats": 10}, {"label": "B", "seats": 10}]}]}' | python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])')
BOXOFFICE_EVENT_ID=$(api POST /v1/events '{"venue_id": "'"$venue"'", "name": "Gala",
  "starts_at": "2030-01-01T20:00:00Z",
  "ticket_types": [{"code": "std", "name": "Standard", "price_cents": 1000, "currency": "EUR"}],
  "allocations": [{"ticket_type": "std", "section": "stalls"}],
  "ga_areas": [{"code": "floor", "name": "Floor", "capacity": 100, "price_cents": 500, "currency": "EUR"}]}' |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])')
export BOXOFFICE_EVENT_ID
# The event stream never ends, so no check can read its answer through.
"$venv/bin/schemathesis" --config-file tests/schemathesis/schemathesis.toml \
  run "http://127.0.0.1:$port/openapi.json" --checks all --max-examples "$examples" \
  --exclude-path '/v1/events/{id}/stream' --seed 20261201 --no-color
