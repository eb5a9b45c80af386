#!/usr/bin/env bash
# What a flood of forged notifications costs everyone else (issue: one client sending 6,600 forged
# notifications a second cut the server's other throughput from 10,600 to 1,600 requests a second).
# The measured load is POST /v1/promotional-offers/sign under wrk -t1 -c32 for 10 s; the flood a
# second wrk -t1 -c32 posting a notification signed by a chain the server does not trust (the
# example chain, against a root of its own), from the same address, for the same 10 s. Three runs
# each, alternated: unflooded, flooded with the failed-verification limit (the default), flooded
# with it out of reach (what 0.12 did). Prints the medians and their ratios to the unflooded run.
# Target: flooded with the limit ≥ 0.8 × unflooded.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
. "$ROOT/Benchmarks/lib.sh"
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$WORK/key.p8" 2>/dev/null
openssl req -x509 -new -key "$WORK/key.p8" -subj "/CN=Not the example root" -days 30 -out "$WORK/root.pem" 2>/dev/null
eval "$("$BIN/entitle" example-data --config "$ROOT/Keys.example/entitle.json")"
config() {  # FAILED-VERIFICATION-LIMIT-JSON
  cat > "$WORK/entitle.json" <<JSON
{"server": {"host": "127.0.0.1", "port": 0},
 "rateLimits": {"client": {"perSecond": 1000000, "burst": 1000000}, "failedVerification": $1},
 "apps": [{"id": "bench", "bundleId": "com.example.app", "environments": ["Sandbox"],
   "signingKey": {"keyId": "BENCHKEY01", "privateKeyFile": "$WORK/key.p8"},
   "verification": {"rootCertificates": ["$WORK/root.pem"], "allowPrivateRoots": true},
   "apiKeys": [{"key": "client_bench_key_not_secret", "role": "client"}],
   "products": {"pro.monthly": {"subscriptionGroup": "G1", "entitlements": ["pro"]}},
   "offers": {"winback50": {"productId": "pro.monthly", "offerIdentifier": "winback50", "eligibility": "any"}}}]}
JSON
}
write_sign_script
cat > "$WORK/forged.lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"signedPayload":"$NOTIFICATION_JWS"}'
LUA
run() {  # FAILED-VERIFICATION-LIMIT-JSON FLOOD(yes|no) → requests/s of the measured load
  config "$1"
  start_server
  if [ "$2" = yes ]; then
    wrk -t1 -c32 -d12s -s "$WORK/forged.lua" "http://127.0.0.1:$PORT/v1/notifications/apple" > "$WORK/flood.txt" &
    flood=$!
    sleep 1
  fi
  wrk -t1 -c32 -d10s -s "$WORK/sign.lua" "http://127.0.0.1:$PORT/v1/promotional-offers/sign" | awk '/Requests\/sec/ {print $2}'
  if [ "$2" = yes ]; then
    wait "$flood"
    echo "  flood: $(awk '/Requests\/sec/ {print $2}' "$WORK/flood.txt") forged posts/s" >&2
  fi
  stop_server
}
default='{"perSecond": 5, "burst": 20}'
unlimited='{"perSecond": 1000000, "burst": 1000000}'
quiet=(); limited=(); open=()
for _ in 1 2 3; do
  quiet+=("$(run "$default" no)")
  limited+=("$(run "$default" yes)")
  open+=("$(run "$unlimited" yes)")
done
median() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
ratio() { python3 -c "import sys; print(round(float(sys.argv[1]) / float(sys.argv[2]), 3))" "$1" "$2"; }
echo "flood.unflooded: $(median "${quiet[@]}") req/s (${quiet[*]})"
echo "flood.limited: $(median "${limited[@]}") req/s (${limited[*]})"
echo "flood.unlimited: $(median "${open[@]}") req/s (${open[*]})"
echo "flood.limited_ratio: $(ratio "$(median "${limited[@]}")" "$(median "${quiet[@]}")")"
echo "flood.unlimited_ratio: $(ratio "$(median "${open[@]}")" "$(median "${quiet[@]}")")"
