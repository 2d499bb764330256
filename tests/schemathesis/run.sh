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
  curl -sS --fail-with-body -X "$1" -H "authorization: Bearer $BOXOFFICE_ADMIN_TOKEN" \
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
# Real ids for every other operation's path, so the fuzzing reaches past its 404: the
# venue, an order and its ticket, a live hold, a booking, a season and a hold of it, a key
# and the webhook of the default organization (schemathesis.toml maps each path to its id).
as_user() { # method path body
  curl -sS --fail-with-body -X "$1" -H "authorization: Bearer $BOXOFFICE_USER_TOKEN" \
    -H 'content-type: application/json' -d "$3" "http://127.0.0.1:$port$2"
}
field() { # a field of the JSON answer on stdin; the whole answer when it has none
  python3 -c 'import json, sys; d = json.load(sys.stdin)
try: print(eval("d" + sys.argv[1]))
except (KeyError, IndexError, TypeError): sys.exit(f"no {sys.argv[1]} in {d}")' "$1"
}
event=/v1/events/$BOXOFFICE_EVENT_ID
hold=$(as_user POST "$event/holds" '{"seats": ["stalls-A-1"]}' | field '["hold_token"]')
export BOXOFFICE_ORDER_ID
BOXOFFICE_ORDER_ID=$(as_user POST "$event/orders" '{"hold_token": "'"$hold"'"}' | field '["order_id"]')
export BOXOFFICE_TICKET_ID
BOXOFFICE_TICKET_ID=$(as_user GET "/v1/orders/$BOXOFFICE_ORDER_ID/tickets" '' | field '["tickets"][0]["id"]')
export BOXOFFICE_HOLD_TOKEN
BOXOFFICE_HOLD_TOKEN=$(as_user POST "$event/holds" '{"seats": ["stalls-B-1"]}' | field '["hold_token"]')
export BOXOFFICE_BOOKING_ID
BOXOFFICE_BOOKING_ID=$(as_user POST "$event/bookings" '{"area": "floor", "quantity": 1}' | field '["booking_id"]')
second=$(api POST /v1/events '{"venue_id": "'"$venue"'", "name": "Gala, second night",
  "starts_at": "2030-01-02T20:00:00Z",
  "ticket_types": [{"code": "std", "name": "Standard", "price_cents": 1000, "currency": "EUR"}],
  "allocations": [{"ticket_type": "std", "section": "stalls"}]}' | field '["id"]')
export BOXOFFICE_SEASON_ID
BOXOFFICE_SEASON_ID=$(api POST /v1/seasons '{"name": "Gala season",
  "event_ids": ["'"$second"'"],
  "ticket_types": [{"code": "season", "name": "Season", "price_cents": 1500, "currency": "EUR"}],
  "allocations": [{"ticket_type": "season", "section": "stalls", "rows": ["B"]}]}' | field '["id"]')
export BOXOFFICE_SEASON_HOLD
BOXOFFICE_SEASON_HOLD=$(as_user POST "/v1/seasons/$BOXOFFICE_SEASON_ID/holds" '{"seats": ["stalls-B-2"]}' | field '["hold_token"]')
api PUT /v1/organizations/default/webhook '{"url": "http://127.0.0.1:9/hook"}' >/dev/null
export BOXOFFICE_VENUE_ID=$venue
export BOXOFFICE_KEY_ID
BOXOFFICE_KEY_ID=$(api POST /v1/organizations/default/keys '{"name": "door", "role": "checkin"}' | field '["id"]')
# The event stream never ends, so no check can read its answer through.
"$venv/bin/schemathesis" --config-file tests/schemathesis/schemathesis.toml \
  run "http://127.0.0.1:$port/openapi.json" --checks all --max-examples "$examples" \
  --exclude-path '/v1/events/{id}/stream' --seed 20261201 --no-color
