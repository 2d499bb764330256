#!/usr/bin/env bash
# Importing a 200,000-seat venue: a pretix plan (10 zones of 100 curved rows of 200 seats,
# some 24 MB) and the same seats as CSV, each imported [runs] times into one release
# server, timed by curl (upload, parse, check, store; the 201 comes after the commit).
# Then a flash sale of 500 buyers on 2,000 seats is run alone and again while the plan
# is imported over and over, to show what an import costs a running sale.
#   bench/import.sh [runs]   (default 3)
# Needs curl, jq, psql and python3; writes its files to target/bench/import-<time>/.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
. bench/lib.sh
bench_build
out=target/bench/import-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"

python3 - "$out" <<'PY'
import json, math, sys
out = sys.argv[1]
zones, csv = [], ["section,row,number,x,y,category"]
for z in range(10):
    rows = []
    for r in range(100):
        radius = 300 + r * 30
        seats = []
        for n in range(200):
            t = math.radians(200 + 140 * n / 199)
            x, y = round(radius * math.cos(t), 1), round(radius * math.sin(t), 1)
            seats.append({"seat_guid": f"z{z}-r{r}-s{n + 1}", "seat_number": str(n + 1),
                          "position": {"x": x, "y": y}, "category": f"Zone {z % 3}"})
            csv.append(f"Zone {z},R{r},{n + 1},{x + z * 9000},{y},Zone {z % 3}")
        rows.append({"row_number": f"R{r}", "seats": seats})
    zones.append({"name": f"Zone {z}", "zone_id": f"zone{z}", "position": {"x": z * 9000, "y": 4000}, "rows": rows})
plan = {"name": "Arena", "size": {"width": 90000, "height": 8000},
        "categories": [{"name": f"Zone {i}"} for i in range(3)], "zones": zones}
json.dump(plan, open(f"{out}/plan.json", "w"), separators=(",", ":"))
open(f"{out}/seats.csv", "w").write("\n".join(csv) + "\n")
PY
echo "plan: $(du -h "$out/plan.json" | cut -f1), csv: $(du -h "$out/seats.csv" | cut -f1)"

BOXOFFICE_HOLDS_PER_MINUTE=1000000 RUST_LOG=error \
  bench_serve boxoffice_import_$$ 3997 "$out/server.log"

import() { # format, content type, file
  curl -s -o "$out/answer.json" -w '%{http_code} %{time_total}' -X POST \
    -H "authorization: Bearer $BENCH_ADMIN" -H "content-type: $2" \
    --data-binary "@$3" "$base/v1/venues/import?format=$1&name=Arena"
}
for format in pretix csv; do
  for run in $(seq "$runs"); do
    if [[ $format == pretix ]]; then answer=$(import pretix application/json "$out/plan.json")
    else answer=$(import csv text/csv "$out/seats.csv"); fi
    echo "$format import $run: HTTP ${answer% *}, $(jq .seat_count "$out/answer.json") seats in ${answer#* } s"
  done
done

sale() { # label
  bench_run "$out/$1.json" --label "$1" flash-sale --seats 2000 --buyers 500
  jq -r --arg l "$1" '.operations[0] as $h | .operations[1] as $c |
    "sale \($l): holds p50/p99 \($h.latency_ms.p50 | round)/\($h.latency_ms.p99 | round) ms, checkouts p99 \($c.latency_ms.p99 | round) ms, \(.figures.seats_sold) seats sold in \(.elapsed_seconds * 10 | round / 10) s"' "$out/$1.json"
}
sale alone
( while true; do import pretix application/json "$out/plan.json" >/dev/null; done ) &
importer=$!
sleep 1
sale during-imports
kill $importer 2>/dev/null || true; wait $importer 2>/dev/null || true
echo "files: $out"
