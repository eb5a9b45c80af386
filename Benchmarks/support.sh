#!/usr/bin/env bash
# Support benchmark (the console's admin API), as `name: value` lines, on a database of
# 1,000,000 transactions over 100,000 subscribers (entitle-bench fill-db):
#   - GET /v1/stats the first time (it evaluates every stored subscription) and cached;
#   - wrk -t2 -c64 10 s each: a customer's history, a search by original transaction id, and
#     GET /healthz in the same run — p99 of each and the ratios to /healthz.
# Usage: Benchmarks/support.sh [--quick]   (--quick: 100,000 transactions over 10,000 subscribers)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
TRANSACTIONS=1000000; SUBSCRIBERS=100000
[ "${1:-}" = "--quick" ] && { TRANSACTIONS=100000; SUBSCRIBERS=10000; }
. "$ROOT/Benchmarks/lib.sh"
mkdir -p "$WORK/chain"
sh "$ROOT/Tests/TestSupport/make-chain.sh" "$WORK/chain"
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$WORK/key.p8" 2>/dev/null
ADMIN="admin_bench_key_not_secret"

FILL=$("$BIN/entitle-bench" fill-db --db "$WORK/support.sqlite3" --transactions "$TRANSACTIONS" --subscribers "$SUBSCRIBERS" | tail -1)
TOKEN=$(python3 -c "import json,sys; print(json.loads(sys.argv[1])['sampleToken'])" "$FILL")
ORIGINAL="o$((SUBSCRIBERS / 2))"
cat > "$WORK/entitle.json" <<JSON
{"server": {"host": "127.0.0.1", "port": 0}, "rateLimits": {"enabled": false}, "storage": {"sqlite": "$WORK/support.sqlite3"},
 "apps": [{"id": "bench", "bundleId": "com.example.app", "environments": ["Sandbox"],
   "signingKey": {"keyId": "BENCHKEY01", "privateKeyFile": "$WORK/key.p8"},
   "apiKeys": [{"key": "$ADMIN", "role": "admin", "name": "bench"}],
   "verification": {"rootCertificates": ["$WORK/chain/root.pem"], "allowPrivateRoots": true},
   "products": {"pro.monthly": {"subscriptionGroup": "G1", "entitlements": ["pro"]}}}]}
JSON
start_server

seconds() { curl -s -o "$WORK/answer.json" -w '%{time_total}' -H "Authorization: Bearer $ADMIN" "http://127.0.0.1:$PORT$1"; }
STATS_COLD=$(seconds /v1/stats)
ACTIVE=$(python3 -c "import json; print(json.load(open('$WORK/answer.json'))['stats']['activeSubscribers'])")
STATS_WARM=$(seconds /v1/stats)

p99() {  # NAME PATH → "rps p99"
  wrk -t2 -c64 -d10s --latency -H "Authorization: Bearer $ADMIN" "http://127.0.0.1:$PORT$2" > "$WORK/wrk-$1.txt"
  echo "$(awk '/Requests\/sec/ {print $2}' "$WORK/wrk-$1.txt") $(awk '$1 == "99%" {print $2}' "$WORK/wrk-$1.txt")"
}
read -r HEALTH_RPS HEALTH_P99 <<< "$(p99 healthz /healthz)"
read -r HISTORY_RPS HISTORY_P99 <<< "$(p99 history "/v1/subscribers/$TOKEN/history")"
read -r SEARCH_RPS SEARCH_P99 <<< "$(p99 search "/v1/subscribers?query=$ORIGINAL")"
stop_server

ms() { python3 -c "import sys; v=sys.argv[1]; print(float(v[:-2]) if v.endswith('ms') else float(v[:-2])/1000 if v.endswith('us') else float(v[:-1])*1000)" "$1"; }
ratio() { python3 -c "import sys; print(round(float(sys.argv[1]) / float(sys.argv[2]), 2))" "$(ms "$1")" "$(ms "$2")"; }
echo
echo "== Entitle support benchmark ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $TRANSACTIONS transactions, $SUBSCRIBERS subscribers) =="
echo "GET /v1/stats, first (walks every subscription): ${STATS_COLD} s; cached: ${STATS_WARM} s; active: $ACTIVE"
echo "GET /healthz: $HEALTH_RPS req/s, p99 $HEALTH_P99"
echo "GET /v1/subscribers/{token}/history: $HISTORY_RPS req/s, p99 $HISTORY_P99 ($(ratio "$HISTORY_P99" "$HEALTH_P99") × healthz p99)"
echo "GET /v1/subscribers?query=<originalTransactionId>: $SEARCH_RPS req/s, p99 $SEARCH_P99 ($(ratio "$SEARCH_P99" "$HEALTH_P99") × healthz p99)"
