#!/usr/bin/env bash
# Business-metrics benchmarks (docs/METRICS.md, "Kept by the writer"), as `name: value` lines:
#   - GET /v1/metrics/summary p99 and a 90-day daily series p99 (MRR, revenue) with SUBSCRIBERS
#     subscriptions kept (three months each, the last still running), against GET /healthz p99 of
#     the same instance, in rounds (each ratio within a round; the median is reported);
#   - durable notification ingest (wrk, 10 s, 32 connections) with the figures kept against the
#     same with `metrics.enabled: false`, in rounds, each on fresh databases.
# Usage: Benchmarks/metrics.sh [--quick]   (--quick: 20,000 subscriptions, 20,000 notifications, two rounds)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SUBSCRIBERS=100000; NOTIFICATIONS=60000; ROUNDS=3
case "${1:-}" in
  --quick) SUBSCRIBERS=20000; NOTIFICATIONS=20000; ROUNDS=2 ;;
  "") ;;
  *) echo "usage: $0 [--quick]" >&2; exit 2 ;;
esac
. "$ROOT/Benchmarks/lib.sh"
mkdir -p "$WORK/chain"
sh "$ROOT/Tests/TestSupport/make-chain.sh" "$WORK/chain"
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$WORK/key.p8" 2>/dev/null

config() {  # DATABASE METRICS-ENABLED
  cat > "$WORK/entitle.json" <<JSON
{"server": {"host": "127.0.0.1", "port": 0}, "rateLimits": {"enabled": false}, "storage": {"sqlite": "$1"},
 "metrics": {"enabled": $2},
 "apps": [{"id": "bench", "bundleId": "com.example.app", "environments": ["Sandbox"],
   "signingKey": {"keyId": "BENCHKEY01", "privateKeyFile": "$WORK/key.p8"},
   "apiKeys": [{"key": "server_bench_key_not_secret", "role": "server"}],
   "verification": {"rootCertificates": ["$WORK/chain/root.pem"], "allowPrivateRoots": true},
   "products": {"pro.monthly": {"subscriptionGroup": "G1", "entitlements": ["pro"], "period": "P1M"}}}]}
JSON
}
rps() { awk '/Requests\/sec/ {print $2}' "$1"; }
p99() { awk '$1 == "99%" {print $2}' "$1"; }
get() {  # PATH OUT
  wrk -t2 -c32 -d10s --latency -H "Authorization: Bearer server_bench_key_not_secret" "http://127.0.0.1:$PORT$1" > "$2"
}

# Reads, with the figures of SUBSCRIBERS subscriptions kept by the writer as fill-db wrote them.
FILL_START=$(date +%s)
"$BIN/entitle-bench" fill-db --db "$WORK/large.sqlite3" --transactions "$((SUBSCRIBERS * 3))" --subscribers "$SUBSCRIBERS" \
  --current yes > "$WORK/fill.txt"
FILL_SECONDS=$(( $(date +%s) - FILL_START ))
config "$WORK/large.sqlite3" true
start_server
TODAY=$(date -u +%Y-%m-%d)
FROM=$(date -u -d "$TODAY - 90 days" +%Y-%m-%d)
curl -sf -H "Authorization: Bearer server_bench_key_not_secret" "http://127.0.0.1:$PORT/v1/metrics/summary?environment=Sandbox" \
  > "$WORK/summary.json"
for round in $(seq "$ROUNDS"); do
  get "/healthz" "$WORK/healthz$round.txt"
  get "/v1/metrics/summary?environment=Sandbox" "$WORK/summary$round.txt"
  get "/v1/metrics/mrr?from=$FROM&to=$TODAY&interval=day&environment=Sandbox" "$WORK/mrr$round.txt"
  get "/v1/metrics/revenue?from=$FROM&to=$TODAY&interval=day&environment=Sandbox" "$WORK/revenue$round.txt"
  echo "$(p99 "$WORK/healthz$round.txt") $(p99 "$WORK/summary$round.txt") $(p99 "$WORK/mrr$round.txt") $(p99 "$WORK/revenue$round.txt")" \
    "$(rps "$WORK/summary$round.txt") $(rps "$WORK/mrr$round.txt")" >> "$WORK/reads.txt"
done
stop_server

# Ingest with and without the figures, alternating, on fresh databases.
"$BIN/entitle-bench" sign-notifications --chain "$WORK/chain" --count "$NOTIFICATIONS" --out "$WORK/bodies.txt"
ingest() {  # DATABASE METRICS-ENABLED OUT
  config "$1" "$2"
  start_server
  BODIES_FILE="$WORK/bodies.txt" BODIES_PART=1/1 WRK_THREADS=1 wrk -t1 -c32 -d10s --latency -s "$ROOT/Benchmarks/wrk/ingest.lua" \
    "http://127.0.0.1:$PORT/v1/notifications/apple" > "$3"
  stop_server
}
for round in $(seq "$ROUNDS"); do
  ingest "$WORK/kept$round.sqlite3" true "$WORK/kept$round.txt"
  ingest "$WORK/off$round.sqlite3" false "$WORK/off$round.txt"
  echo "$(rps "$WORK/kept$round.txt") $(rps "$WORK/off$round.txt")" >> "$WORK/ingest.txt"
done

echo
echo "== Entitle business-metrics benchmark ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores) =="
echo "fill-db: $((SUBSCRIBERS * 3)) transactions of $SUBSCRIBERS subscriptions, figures kept, in ${FILL_SECONDS} s"
echo "summary now: $(cat "$WORK/summary.json")"
python3 - "$WORK/reads.txt" "$WORK/ingest.txt" "$SUBSCRIBERS" <<'PY'
import re, statistics, sys
def ms(text):  # wrk's latency: 812.00us, 16.66ms, 1.02s
    number, unit = re.match(r"([0-9.]+)([a-z]+)", text).groups()
    return float(number) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]
reads = [line.split() for line in open(sys.argv[1])]
for index, (health, summary, mrr, revenue, summary_rps, mrr_rps) in enumerate(reads, 1):
    print(f"round {index}: /healthz p99 {health}; summary p99 {summary} ({float(summary_rps):.0f}/s, {ms(summary) / ms(health):.2f} x); "
          f"90-day MRR p99 {mrr} ({float(mrr_rps):.0f}/s, {ms(mrr) / ms(health):.2f} x); 90-day revenue p99 {revenue} "
          f"({ms(revenue) / ms(health):.2f} x)")
median = lambda values: round(statistics.median(values), 2)
print(f"GET /v1/metrics/summary p99 with {sys.argv[3]} subscriptions: {median([ms(r[1]) / ms(r[0]) for r in reads])} x /healthz p99")
print(f"GET /v1/metrics/mrr, 90 days by day, p99: {median([ms(r[2]) / ms(r[0]) for r in reads])} x /healthz p99")
print(f"GET /v1/metrics/revenue, 90 days by day, p99: {median([ms(r[3]) / ms(r[0]) for r in reads])} x /healthz p99")
ingest = [[float(x) for x in line.split()] for line in open(sys.argv[2])]
for index, (kept, off) in enumerate(ingest, 1):
    print(f"round {index}: ingest with the figures {kept:.0f}/s, without {off:.0f}/s ({kept / off:.2f} x)")
print(f"ingest with the figures kept: {median([kept / off for kept, off in ingest])} x ingest without (median of the rounds' ratios)")
PY
