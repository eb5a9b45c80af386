#!/usr/bin/env bash
# What rate limiting costs when no limit is reached: POST /v1/promotional-offers/sign (v1
# signature) with the limits on but never reached, and with rateLimits.enabled false, each 10 s
# under wrk -t2 -c64, alternated over three rounds; medians and their ratio. Target ≥ 0.95.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
. "$ROOT/Benchmarks/lib.sh"
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$WORK/key.p8" 2>/dev/null
config() {  # RATE-LIMITS-JSON
  cat > "$WORK/entitle.json" <<JSON
{"server": {"host": "127.0.0.1", "port": 0}, "rateLimits": $1,
 "apps": [{"id": "bench", "bundleId": "com.example.app", "environments": ["Sandbox"],
   "signingKey": {"keyId": "BENCHKEY01", "privateKeyFile": "$WORK/key.p8"},
   "apiKeys": [{"key": "client_bench_key_not_secret", "role": "client"}],
   "products": {"pro.monthly": {"subscriptionGroup": "G1", "entitlements": ["pro"]}},
   "offers": {"winback50": {"productId": "pro.monthly", "offerIdentifier": "winback50", "eligibility": "any"}}}]}
JSON
}
write_sign_script
run() {  # RATE-LIMITS-JSON → requests/s
  config "$1"
  start_server
  wrk -t2 -c64 -d10s -s "$WORK/sign.lua" "http://127.0.0.1:$PORT/v1/promotional-offers/sign" | awk '/Requests\/sec/ {print $2}'
  stop_server
}
on=(); off=()
for _ in 1 2 3; do
  on+=("$(run '{"client": {"perSecond": 1000000000, "burst": 1000000000}}')")
  off+=("$(run '{"enabled": false}')")
done
median() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
echo "sign.limits_on: $(median "${on[@]}") req/s (${on[*]})"
echo "sign.limits_off: $(median "${off[@]}") req/s (${off[*]})"
echo "sign.ratio: $(python3 -c "import sys; print(round(float(sys.argv[1]) / float(sys.argv[2]), 3))" "$(median "${on[@]}")" "$(median "${off[@]}")")"
