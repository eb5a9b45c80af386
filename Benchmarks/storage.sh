#!/usr/bin/env bash
# Storage benchmarks of the subscribers milestone, as `name: value` lines:
#   - POST /v1/notifications/apple: distinct signed notifications from wrk (-t2 -c32, 10 s; the
#     bodies are signed beforehand by entitle-bench sign-notifications), each answered 200 only after its commit
#     (synchronous = FULL); the stored count is checked against the acknowledged one;
#   - GET /v1/subscribers/{token}: wrk -t2 -c64 p99 with 10,000 and with 1,000,000 stored transactions.
# Usage: Benchmarks/storage.sh [--quick]   (--quick: 100,000 instead of 1,000,000, fewer notifications)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
LARGE=1000000; NOTIFICATIONS=40000
[ "${1:-}" = "--quick" ] && { LARGE=100000; NOTIFICATIONS=10000; }
. "$ROOT/Benchmarks/lib.sh"
mkdir -p "$WORK/chain"
sh "$ROOT/Tests/TestSupport/make-chain.sh" "$WORK/chain"
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$WORK/key.p8" 2>/dev/null

start_server_on() {  # DB
  cat > "$WORK/entitle.json" <<JSON
{"server": {"host": "127.0.0.1", "port": 0}, "rateLimits": {"enabled": false}, "storage": {"sqlite": "$1"},
 "apps": [{"id": "bench", "bundleId": "com.example.app", "environments": ["Sandbox"],
   "signingKey": {"keyId": "BENCHKEY01", "privateKeyFile": "$WORK/key.p8"},
   "apiKeys": [{"key": "client_bench_key_not_secret", "role": "client"}],
   "verification": {"rootCertificates": ["$WORK/chain/root.pem"], "allowPrivateRoots": true},
   "products": {"pro.monthly": {"subscriptionGroup": "G1", "entitlements": ["pro"]}}}]}
JSON
  start_server
}
field() { python3 -c "import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])" "$1" "$2"; }

# Ingest: distinct signed notifications, sent by wrk.
"$BIN/entitle-bench" sign-notifications --chain "$WORK/chain" --count "$NOTIFICATIONS" --out "$WORK/bodies.txt"
start_server_on "$WORK/ingest.sqlite3"
BODIES_FILE="$WORK/bodies.txt" WRK_THREADS=2 wrk -t2 -c32 -d10s --latency -s "$ROOT/Benchmarks/wrk/ingest.lua" \
  "http://127.0.0.1:$PORT/v1/notifications/apple" > "$WORK/wrk-ingest.txt"
stop_server
INGEST_RPS=$(awk '/Requests\/sec/ {print $2}' "$WORK/wrk-ingest.txt")
INGEST_P99=$(awk '$1 == "99%" {print $2}' "$WORK/wrk-ingest.txt")
INGEST_DONE=$(awk '/requests in/ {print $1}' "$WORK/wrk-ingest.txt")
INGEST_BAD=$(awk '/Non-2xx/ {print $NF}' "$WORK/wrk-ingest.txt")
STORED=$(sqlite3 "$WORK/ingest.sqlite3" "SELECT count(*) FROM notifications" 2>/dev/null || echo "?")

# Reads with few and with many stored transactions.
read_p99() {  # TRANSACTIONS SUBSCRIBERS
  local db="$WORK/read-$1.sqlite3"
  local fill; fill=$("$BIN/entitle-bench" fill-db --db "$db" --transactions "$1" --subscribers "$2" | tail -1)
  local token; token=$(field "$fill" sampleToken)
  start_server_on "$db"
  wrk -t2 -c64 -d10s --latency -H "Authorization: Bearer client_bench_key_not_secret" \
    "http://127.0.0.1:$PORT/v1/subscribers/$token" > "$WORK/wrk-$1.txt"
  stop_server
  local rps p99
  rps=$(awk '/Requests\/sec/ {print $2}' "$WORK/wrk-$1.txt")
  p99=$(awk '$1 == "99%" {print $2}' "$WORK/wrk-$1.txt")
  echo "GET /v1/subscribers with $1 stored transactions: $rps req/s, p99 $p99 (fill $(field "$fill" value) transactions/s)"
}

echo
echo "== Entitle storage benchmark ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores) =="
echo "POST /v1/notifications/apple: $INGEST_RPS notifications/s durable, p99 $INGEST_P99, non-2xx ${INGEST_BAD:-0}, answered $INGEST_DONE, stored $STORED"
read_p99 10000 1000
read_p99 "$LARGE" 100000
