#!/usr/bin/env bash
# `entitle test-store populate` at size: 10,000 customers over 12 months (seed 7) on SQLite, each
# step's notification signed, posted to the server's own route, verified and stored. Prints the
# population's summary, the wall time and the peak resident memory (GNU time). Target: ≤ 5 minutes,
# memory flat (docs/PERFORMANCE.md).
# Usage: Benchmarks/populate.sh [CUSTOMERS] [MONTHS]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CUSTOMERS="${1:-10000}"
MONTHS="${2:-12}"
. "$ROOT/Benchmarks/lib.sh"
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$WORK/key.p8" 2>/dev/null
"$BIN/entitle" test-store init --out "$WORK/chain" > /dev/null
cat > "$WORK/entitle.json" <<JSON
{"server": {"host": "127.0.0.1", "port": 0}, "rateLimits": {"enabled": false}, "storage": {"sqlite": "$WORK/bench.sqlite3"},
 "testStore": {"enabled": true, "chain": "$WORK/chain"},
 "apps": [{"id": "bench", "bundleId": "com.example.app", "environments": ["Sandbox"], "appAppleId": 1234,
   "signingKey": {"keyId": "BENCHKEY01", "privateKeyFile": "$WORK/key.p8"},
   "apiKeys": [{"key": "admin_bench_key_not_secret", "role": "admin"}],
   "products": {"pro.monthly": {"subscriptionGroup": "G1", "entitlements": ["pro"], "period": "P1M"},
                "pro.yearly": {"subscriptionGroup": "G1", "entitlements": ["pro"], "period": "P1Y"},
                "gems": {"entitlements": []}}}]}
JSON
/usr/bin/time -v "$BIN/entitle" test-store populate --config "$WORK/entitle.json" --customers "$CUSTOMERS" --months "$MONTHS" \
  --seed 7 2> "$WORK/time.txt"
grep -E "Elapsed \(wall clock\)|Maximum resident set size" "$WORK/time.txt"
