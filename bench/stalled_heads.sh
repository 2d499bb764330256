#!/usr/bin/env bash
# 300 clients that send half a request head and stop, against a server whose soft
# open-file limit is 256 (it raises it to the hard limit): the server keeps serving, and
# closes the stalled connections after BOXOFFICE_HEADER_TIMEOUT_MS (default 10 s).
#   bench/stalled_heads.sh            (builds target/release/boxoffice first)
# The one bench script that starts its server without bench/lib.sh: the server runs under
# a soft open-file limit of its own, in a subshell, which the clients must not share.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q --bin boxoffice
port=3998 db=postgres://postgres@127.0.0.1:5432/stalled_heads_$$
(ulimit -Sn 256; exec target/release/boxoffice serve --bind 127.0.0.1:$port --database-url "$db" \
  --jwt-secret sec >/dev/null 2>&1) & server=$!
cleanup() {
  kill $server 2>/dev/null || true
  wait $server 2>/dev/null || true
  psql -q -h 127.0.0.1 -U postgres -c "drop database if exists stalled_heads_$$ with (force)" || true
}
trap cleanup EXIT
for _ in $(seq 100); do curl -sf http://127.0.0.1:$port/healthz >/dev/null && break; sleep 0.1; done
python3 - "$port" <<'PY'
import socket, subprocess, sys, time
port = int(sys.argv[1])
stalled = []
for _ in range(300):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
    stalled.append(s)
t = time.time()
out = subprocess.run(["curl", "-s", "-w", " %{http_code} in %{time_total}s", f"127.0.0.1:{port}/healthz"],
                     capture_output=True, text=True).stdout
print("with 300 half-sent heads open, GET /healthz:", out)
closed = 0
for s in stalled:
    s.settimeout(30)
    try:
        closed += s.recv(10) == b""
    except OSError:
        pass
print(f"closed by the server: {closed} of 300, {time.time() - t:.1f} s after they stalled")
PY
