#!/usr/bin/env bash
# The door on one instance, on each hold store: `boxoffice bench door` (every ticket of an
# event of <tickets> standing places scanned once by <scanners> scanners at once, 1% of them
# revoked first; check-ins a second, their p99, and the revocation list's size and read
# time), then `boxoffice bench pdfs` (availability reads and check-ins from 4 readers, 5 s
# alone, then while 50 PDFs of 20 pages are drawn, two a buyer: their p99 both ways, and
# PDFs a second). Each run on a fresh database.
#   bench/door.sh [tickets] [scanners]      (defaults: 100000 16)
# STORES ("postgres redis"); SCENARIOS ("door pdfs"). With $bin set, that build is
# measured; else this tree's release build (built first). LOADGEN: the load generator's
# binary ($bin), for a build older than these scenarios. Needs psql, curl and jq.
set -euo pipefail
cd "$(dirname "$0")/.."
tickets=${1:-100000} scanners=${2:-16}
given=${bin:-}
. bench/lib.sh
[[ -n $given ]] || bench_build
loadgen=${LOADGEN:-$bin}
out=target/bench/door-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
for store in ${STORES:-postgres redis}; do
  for scenario in ${SCENARIOS:-door pdfs}; do
    BOXOFFICE_HOLD_STORE=$store BOXOFFICE_HOLDS_PER_MINUTE=1000000 RUST_LOG=error \
      bench_serve "boxoffice_door_$$" 3997 "$out/server.log"
    bench_settle
    case $scenario in
      door) args=(door --tickets "$tickets" --scanners "$scanners" --revoked $((tickets / 100))) ;;
      pdfs) args=(pdfs --pdfs 50 --pages 20 --readers 4) ;;
      *) echo "no scenario $scenario (door, pdfs)" >&2; exit 2 ;;
    esac
    "$loadgen" bench --url "$base" --admin-token "$BENCH_ADMIN" --jwt-secret "$BENCH_SECRET" \
      --json "${args[@]}" >"$out/$store-$scenario.json" || echo "a check of $store $scenario failed" >&2
    jq -r --arg st "$store" '
      "\($st) \(.scenario): " + ([.operations[] | "\(.name) \(.requests) p50 \(.latency_ms.p50) p99 \(.latency_ms.p99) ms"] | join("; "))
      + "; " + ([.figures | to_entries[] | "\(.key) \(.value * 10 | round / 10)"] | join(", "))
      + "; checks \([.checks[] | .passed] | all)"' "$out/$store-$scenario.json"
    bench_stop
  done
done
echo "reports in $out"
