#!/usr/bin/env bash
# 400 clients open the event stream of a 20,000-seat event and never read it, while
# holds come and go; prints the server's resident memory before and after, and whether
# a stream that does read still follows the sale.
#   bench/slow_streams.sh [streams] [gzip|identity]   (builds target/release/boxoffice first)
# The silent clients ask for gzip as browsers do, unless told `identity`.
# BOXOFFICE_BIN runs another binary (an older build, to compare).
# The server runs with the per-address cap off (--streams-per-address 0), as if the
# readers came from many addresses; with the cap (32 by default) one address holds 32.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
bench_build
bin=${BOXOFFICE_BIN:-$bin}
streams=${1:-400}
port=3997
bench_serve slow_streams_$$ $port /dev/null --streams-per-address 0 --holds-per-minute 0
python3 - "$port" "$server" "$streams" "${2:-gzip}" <<'PY'
import base64, hashlib, hmac, json, socket, sys, threading, time, urllib.request

port, pid, streams = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
accept = "Accept-Encoding: gzip\r\n" if sys.argv[4] == "gzip" else ""
base = f"http://127.0.0.1:{port}"

def call(method, path, body=None, token="bench-admin"):
    req = urllib.request.Request(base + path, method=method,
                                 data=None if body is None else json.dumps(body).encode(),
                                 headers={"content-type": "application/json",
                                          "authorization": "Bearer " + token})
    with urllib.request.urlopen(req) as r:
        return json.loads(r.read() or b"null")

def token(user):
    b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=")
    head = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = b64(json.dumps({"sub": user, "exp": int(time.time()) + 3600}).encode())
    sig = b64(hmac.new(b"bench-secret", head + b"." + body, hashlib.sha256).digest())
    return (head + b"." + body + b"." + sig).decode()

def tcp_mb():
    """Memory the kernel holds in TCP buffers, machine-wide (sockstat counts 4 KB pages)."""
    with open("/proc/net/sockstat") as f:
        for line in f:
            if line.startswith("TCP:"):
                fields = line.split()
                return int(fields[fields.index("mem") + 1]) * 4 / 1024

def rss_mb():
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024

sections = [{"id": f"s{i}", "name": f"S{i}", "origin": {"x": 0, "y": i * 50},
             "rows": [{"label": f"R{r}", "seats": 25} for r in range(40)]} for i in range(20)]
venue = call("POST", "/v1/venues", {"name": "Big", "sections": sections})["id"]
event = call("POST", "/v1/events", {
    "venue_id": venue, "name": "Big sale", "starts_at": "2030-01-01T20:00:00Z",
    "max_seats_per_user": 8,
    "ticket_types": [{"code": "std", "name": "Standard", "price_cents": 1000, "currency": "EUR"}],
    "allocations": [{"ticket_type": "std", "section": f"s{i}"} for i in range(20)]})["id"]
call("GET", f"/v1/events/{event}/seats")  # warm the seat map cache
time.sleep(1)
before, tcp_before = rss_mb(), tcp_mb()

# Holds come and go while the streams open.
stop = threading.Event()
churned = [0]
def churn():
    n = 0
    while not stop.is_set():
        n += 1
        seat = f"s{n % 20}-R{(n // 20) % 40}-{(n // 800) % 25 + 1}"
        try:
            hold = call("POST", f"/v1/events/{event}/holds", {"seats": [seat]}, token(f"u{n}"))
            call("DELETE", f"/v1/events/{event}/holds/{hold['hold_token']}", None, token(f"u{n}"))
            churned[0] += 1
        except Exception:
            pass
churner = threading.Thread(target=churn)
churner.start()

silent = []
for _ in range(streams):
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.sendall(f"GET /v1/events/{event}/stream HTTP/1.1\r\nHost: x\r\n{accept}\r\n".encode())
    silent.append(s)
time.sleep(5)
stop.set()
churner.join()
time.sleep(2)
after, tcp_after = rss_mb(), tcp_mb()

# A stream that reads still follows the sale.
reader = socket.create_connection(("127.0.0.1", port))
reader.sendall(f"GET /v1/events/{event}/stream HTTP/1.1\r\nHost: x\r\n\r\n".encode())
reader.settimeout(10)
seen = b""
while b"retry: 2000" not in seen:  # sent right after the snapshot
    seen += reader.recv(1 << 20)
hold = call("POST", f"/v1/events/{event}/holds", {"seats": ["s0-R0-1"]}, token("last"))
while b"event: seats" not in seen:
    seen += reader.recv(1 << 16)
print(f"{streams} streams ({sys.argv[4]}) that never read, on a 20,000-seat event while "
      f"{churned[0]} holds were made and released:")
print(f"  server RSS {before:.0f} MB before, {after:.0f} MB with them open "
      f"(+{after - before:.0f} MB, {(after - before) * 1024 / streams:.0f} KB a stream)")
print(f"  kernel TCP buffers {tcp_before:.0f} MB before, {tcp_after:.0f} MB with them open "
      f"(+{tcp_after - tcp_before:.0f} MB)")
print("  a stream that reads got its snapshot and the next hold: ok")
PY
