#!/usr/bin/env bash
# Retention Messaging realtime answers (issue: answer Apple while the cancellation page opens), as
# `name: value` lines: POST /v1/retention/apple p99 under 100 concurrent connections for 10 s, each
# request a fresh signed realtime request (verify, read the subscription, decide, sign a
# promotional offer or answer a message, record with its event), beside GET /healthz p99 of the
# same server in the same run. 10,000 subscriptions stored (entitle-bench fill-db).
# Target: p99 ≤ 50 ms (Apple allows about 700 ms); every answer recorded.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
. "$ROOT/Benchmarks/lib.sh"
mkdir -p "$WORK/chain"
sh "$ROOT/Tests/TestSupport/make-chain.sh" "$WORK/chain"
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$WORK/key.p8" 2>/dev/null
"$BIN/entitle-bench" fill-db --db "$WORK/facts.sqlite3" --transactions 20000 --subscribers 10000 >/dev/null
cat > "$WORK/entitle.json" <<JSON
{"server": {"host": "127.0.0.1", "port": 0}, "rateLimits": {"enabled": false}, "storage": {"sqlite": "$WORK/facts.sqlite3"},
 "apps": [{"id": "bench", "bundleId": "com.example.app", "appAppleId": 1234, "environments": ["Sandbox"],
   "signingKey": {"keyId": "BENCHKEY01", "issuerId": "57246542-96fe-1a63-e053-0824d011072a", "privateKeyFile": "$WORK/key.p8"},
   "apiKeys": [{"key": "server_bench_key_not_secret", "role": "server"}],
   "verification": {"rootCertificates": ["$WORK/chain/root.pem"], "allowPrivateRoots": true},
   "products": {"pro.monthly": {"subscriptionGroup": "G1", "entitlements": ["pro"]}},
   "offers": {"stay": {"productId": "pro.monthly", "offerIdentifier": "pro_stay", "eligibility": "any"}},
   "retention": {"defaultMessage": "msg-default", "rules": [
     {"name": "offer", "when": {"productId": "pro.monthly"}, "answer": {"promotionalOffer": {"messageIdentifier": "msg-offer", "offerId": "stay"}}},
     {"name": "stay", "answer": {"message": "msg-stay"}}]}}]}
JSON
"$BIN/entitle-bench" sign-realtime --chain "$WORK/chain" --count 60000 --subscribers 10000 --out "$WORK/requests.txt"
start_server
BODIES_FILE="$WORK/requests.txt" POST_PATH=/v1/retention/apple WRK_THREADS=2 wrk -t2 -c100 -d10s --latency \
  -s "$ROOT/Benchmarks/wrk/ingest.lua" "http://127.0.0.1:$PORT/v1/retention/apple" > "$WORK/retention.txt"
wrk -t2 -c100 -d10s --latency "http://127.0.0.1:$PORT/healthz" > "$WORK/healthz.txt"
p99() { awk '$1 == "99%" {print $2}' "$1"; }
rps() { awk '/Requests\/sec/ {print $2}' "$1"; }
echo "retention.p99: $(p99 "$WORK/retention.txt")"
echo "retention.requests_per_s: $(rps "$WORK/retention.txt")"
echo "retention.non_2xx: $(awk '/Non-2xx/ {print $4}' "$WORK/retention.txt")"
echo "healthz.p99: $(p99 "$WORK/healthz.txt")"
stop_server
# Every answer is recorded (written while it is sent): the records stored once the server stopped.
echo "retention.answered: $(awk '/requests in/ {print $1}' "$WORK/retention.txt")"
echo "retention.recorded: $(sqlite3 "$WORK/facts.sqlite3" 'SELECT count(*) FROM retention_records')"
