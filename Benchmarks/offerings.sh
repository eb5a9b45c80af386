#!/usr/bin/env bash
# Offerings benchmark (docs/OFFERINGS.md), as `name: value` lines, on a database of 100,000
# customers (1,000,000 transactions, entitle-bench fill-db), each with attributes set:
#   - wrk -t2 -c64 10 s each, alternating three rounds: GET /v1/subscribers/{token}/offerings
#     for a placement whose rules read the customer's state, days since first seen, attributes and
#     the device, and GET /healthz in the same round — p99 of each and the ratio (target ≤ 2 ×).
# Usage: Benchmarks/offerings.sh [--quick]   (--quick: 100,000 transactions over 10,000 customers, one round)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
TRANSACTIONS=1000000; SUBSCRIBERS=100000; ROUNDS=3
[ "${1:-}" = "--quick" ] && { TRANSACTIONS=100000; SUBSCRIBERS=10000; ROUNDS=1; }
. "$ROOT/Benchmarks/lib.sh"
mkdir -p "$WORK/chain"
sh "$ROOT/Tests/TestSupport/make-chain.sh" "$WORK/chain"
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$WORK/key.p8" 2>/dev/null
CLIENT="client_bench_key_not_secret"

FILL=$("$BIN/entitle-bench" fill-db --db "$WORK/offerings.sqlite3" --transactions "$TRANSACTIONS" --subscribers "$SUBSCRIBERS" | tail -1)
TOKEN=$(python3 -c "import json,sys; print(json.loads(sys.argv[1])['sampleToken'])" "$FILL")
cat > "$WORK/entitle.json" <<JSON
{"server": {"host": "127.0.0.1", "port": 0}, "rateLimits": {"enabled": false}, "storage": {"sqlite": "$WORK/offerings.sqlite3"},
 "apps": [{"id": "bench", "bundleId": "com.example.app", "environments": ["Sandbox"],
   "signingKey": {"keyId": "BENCHKEY01", "privateKeyFile": "$WORK/key.p8"},
   "apiKeys": [{"key": "$CLIENT", "role": "client"}],
   "verification": {"rootCertificates": ["$WORK/chain/root.pem"], "allowPrivateRoots": true},
   "products": {"pro.monthly": {"subscriptionGroup": "G1", "entitlements": ["pro"]},
                "pro.yearly": {"subscriptionGroup": "G1", "entitlements": ["pro"]}},
   "offers": {"winback": {"productId": "pro.yearly", "offerIdentifier": "pro_yearly_winback", "eligibility": "lapsed"}},
   "offerings": {"standard": {"packages": {"monthly": {"appStore": {"productId": "pro.monthly"}},
                                           "annual": {"appStore": {"productId": "pro.yearly", "offerId": "winback"}}},
                              "metadata": {"title": "Go Pro"}},
                 "winback": {"packages": {"annual": {"appStore": {"productId": "pro.yearly", "offerId": "winback"}}}},
                 "beta": {"packages": {"monthly": {"appStore": {"productId": "pro.monthly"}}}}},
   "placements": {"onboarding": {"offering": "standard", "rules": [
     {"name": "new", "when": {"state": "neverSubscribed", "daysSinceFirstSeenBelow": 3}, "offering": "standard"},
     {"name": "lapsed", "when": {"state": "lapsed", "country": ["DE", "AT"]}, "offering": "winback"},
     {"name": "beta", "when": {"attributes": {"cohort": "beta"}, "appVersionAtLeast": "2.10"}, "offering": "beta"}]}}}]}
JSON
start_server
curl -sf -o /dev/null -X POST -H "Authorization: Bearer $CLIENT" -H "Content-Type: application/json" \
  -d '{"attributes": {"cohort": "beta", "plan": "family"}}' "http://127.0.0.1:$PORT/v1/subscribers/$TOKEN/attributes"
OFFERING="/v1/subscribers/$TOKEN/offerings?placement=onboarding&country=DE&platform=iOS&appVersion=2.10.1"
ANSWER=$(curl -sf -H "Authorization: Bearer $CLIENT" "http://127.0.0.1:$PORT$OFFERING")

p99() {  # NAME PATH → "rps p99"
  wrk -t2 -c64 -d10s --latency -H "Authorization: Bearer $CLIENT" "http://127.0.0.1:$PORT$2" > "$WORK/wrk-$1.txt"
  echo "$(awk '/Requests\/sec/ {print $2}' "$WORK/wrk-$1.txt") $(awk '$1 == "99%" {print $2}' "$WORK/wrk-$1.txt")"
}
ms() { python3 -c "import sys; v=sys.argv[1]; print(float(v[:-2]) if v.endswith('ms') else float(v[:-2])/1000 if v.endswith('us') else float(v[:-1])*1000)" "$1"; }
ratio() { python3 -c "import sys; print(round(float(sys.argv[1]) / float(sys.argv[2]), 2))" "$(ms "$1")" "$(ms "$2")"; }
echo
echo "== Entitle offerings benchmark ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $TRANSACTIONS transactions, $SUBSCRIBERS customers) =="
echo "the answer: $ANSWER"
RATIOS=()
for round in $(seq 1 "$ROUNDS"); do
  read -r HEALTH_RPS HEALTH_P99 <<< "$(p99 healthz /healthz)"
  read -r OFFERING_RPS OFFERING_P99 <<< "$(p99 offering "$OFFERING")"
  R=$(ratio "$OFFERING_P99" "$HEALTH_P99")
  RATIOS+=("$R")
  echo "round $round: GET /healthz $HEALTH_RPS req/s, p99 $HEALTH_P99; GET …/offerings $OFFERING_RPS req/s, p99 $OFFERING_P99 ($R × healthz p99)"
done
stop_server
echo "offerings p99: $(printf '%s\n' "${RATIOS[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}') × /healthz p99 (median of $ROUNDS rounds; target ≤ 2)"
