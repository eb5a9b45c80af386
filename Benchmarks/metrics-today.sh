#!/usr/bin/env bash
# What reading the figures costs on a launch day: GET /v1/metrics/summary and a 90-day daily MRR
# series, p99 under wrk -t2 -c32 for 10 s, against GET /healthz p99 of the same instance, on two
# databases of SUBSCRIBERS subscriptions, one with no purchase today and one with TODAY first
# purchases spread over today's hours so far. Rounds alternate the two; each ratio is taken within
# a round and the median printed. Targets: summary ≤ 2 ×, series ≤ 5 × /healthz p99, whatever today
# holds. Usage: Benchmarks/metrics-today.sh [--quick]   (--quick: one round)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SUBSCRIBERS=20000; TODAY=10000; ROUNDS=3
[ "${1:-}" = "--quick" ] && ROUNDS=1
. "$ROOT/Benchmarks/lib.sh"
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$WORK/key.p8" 2>/dev/null
config() {  # DATABASE
  cat > "$WORK/entitle.json" <<JSON
{"server": {"host": "127.0.0.1", "port": 0}, "rateLimits": {"enabled": false}, "storage": {"sqlite": "$1"},
 "apps": [{"id": "bench", "bundleId": "com.example.app", "environments": ["Sandbox"],
   "signingKey": {"keyId": "BENCHKEY01", "privateKeyFile": "$WORK/key.p8"},
   "apiKeys": [{"key": "server_bench_key_not_secret", "role": "server"}],
   "products": {"pro.monthly": {"subscriptionGroup": "G1", "entitlements": ["pro"], "period": "P1M"}}}]}
JSON
}
"$BIN/entitle-bench" fill-db --db "$WORK/quiet.sqlite3" --transactions "$((SUBSCRIBERS * 3))" --subscribers "$SUBSCRIBERS" \
  --current yes > /dev/null
"$BIN/entitle-bench" fill-db --db "$WORK/launch.sqlite3" --transactions "$((SUBSCRIBERS * 3))" --subscribers "$SUBSCRIBERS" \
  --current yes --today "$TODAY" > /dev/null
p99() { awk '$1 == "99%" {v=$2; if (v ~ /us$/) {sub(/us/,"",v); v/=1000} else if (v ~ /ms$/) {sub(/ms/,"",v)} else if (v ~ /s$/) {sub(/s/,"",v); v*=1000}; print v}' "$1"; }
get() { wrk -t2 -c32 -d10s --latency -H "Authorization: Bearer server_bench_key_not_secret" "http://127.0.0.1:$PORT$1" > "$2"; }
TODAY_DATE=$(date -u +%Y-%m-%d)
FROM=$(date -u -d "$TODAY_DATE - 90 days" +%Y-%m-%d)
for round in $(seq "$ROUNDS"); do
  for db in quiet launch; do
    config "$WORK/$db.sqlite3"
    start_server
    curl -sf -H "Authorization: Bearer server_bench_key_not_secret" \
      "http://127.0.0.1:$PORT/v1/metrics/summary?environment=Sandbox" > "$WORK/$db-summary.json"
    get "/healthz" "$WORK/h.txt"
    get "/v1/metrics/summary?environment=Sandbox" "$WORK/s.txt"
    get "/v1/metrics/mrr?from=$FROM&to=$TODAY_DATE&interval=day&environment=Sandbox" "$WORK/m.txt"
    echo "$db $(p99 "$WORK/h.txt") $(p99 "$WORK/s.txt") $(p99 "$WORK/m.txt")" >> "$WORK/reads.txt"
    stop_server
  done
done
echo "summary (quiet day): $(cat "$WORK/quiet-summary.json")"
echo "summary (launch day, $TODAY purchases today): $(cat "$WORK/launch-summary.json")"
python3 - "$WORK/reads.txt" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
for db in ("quiet", "launch"):
    mine = [list(map(float, r[1:])) for r in rows if r[0] == db]
    summary = [s / h for h, s, m in mine]
    series = [m / h for h, s, m in mine]
    print(f"{db}: healthz p99 {statistics.median(r[0] for r in mine):.2f} ms, summary p99 {statistics.median(r[1] for r in mine):.2f} ms"
          f" ({statistics.median(summary):.2f} x, rounds {', '.join(f'{x:.2f}' for x in summary)}),"
          f" 90-day MRR p99 {statistics.median(r[2] for r in mine):.2f} ms ({statistics.median(series):.2f} x, rounds {', '.join(f'{x:.2f}' for x in series)})")
PY
