#!/usr/bin/env bash
# The test store's speed: a full year of one customer's monthly subscription through HTTP (a
# purchase, twelve renewals, a failed renewal with its grace period and recovery, a refund), each
# step's notification signed, posted to the server's own route, verified and stored, timed from
# outside with curl. Rounds take a new customer each; the median is printed. Target: ≤ 2 s a year.
# Usage: Benchmarks/test-store.sh [--quick]   (--quick: one round)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
ROUNDS=5
[ "${1:-}" = "--quick" ] && ROUNDS=1
. "$ROOT/Benchmarks/lib.sh"
write_test_store_config
start_server
post() { curl -sf -X POST "http://127.0.0.1:$PORT$1" -H "Authorization: Bearer admin_bench_key_not_secret" \
  -H "content-type: application/json" -d "${2:-{\}}"; }
year() {  # one customer's year; prints the notifications sent
  local token original
  token=$(python3 -c 'import uuid; print(uuid.uuid4())')
  original=$(post /v1/test-store/apple/purchases "{\"appAccountToken\":\"$token\",\"productId\":\"pro.monthly\"}" \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["originalTransactionId"])')
  post /v1/test-store/clock '{"advance":"P5M"}' > /dev/null
  post "/v1/test-store/apple/subscriptions/$original/fail-renewal" '{"gracePeriod":true}' > /dev/null
  post /v1/test-store/clock '{"advance":"P1M"}' > /dev/null
  post "/v1/test-store/apple/subscriptions/$original/recover" > /dev/null
  post /v1/test-store/clock '{"advance":"P6M"}' > /dev/null
  post "/v1/test-store/apple/subscriptions/$original/refund" > /dev/null
}
times=()
for round in $(seq "$ROUNDS"); do
  start=$(date +%s.%N)
  year
  end=$(date +%s.%N)
  times+=("$(echo "$end - $start" | bc)")
  echo "round $round: $(printf '%.3f' "${times[-1]}") s" >&2
done
median=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
notifications=$(grep -c '"notifications/apple"\|/v1/notifications/apple' "$WORK/server.log" || true)
echo "a year of one customer through HTTP: median $(printf '%.3f' "$median") s over $ROUNDS rounds (target ≤ 2 s); $notifications notification posts logged"
