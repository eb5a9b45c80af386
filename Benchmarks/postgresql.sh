#!/usr/bin/env bash
# PostgreSQL benchmarks (issue: several instances on one database), as `name: value` lines:
#   - durable notification ingest (wrk, 10 s, 32 connections in all) on SQLite, on PostgreSQL with one
#     instance, and with two instances sharing the load (two wrk of 16 connections, one per
#     instance), each on a fresh database; ratios to the SQLite figure of the same run;
#   - GET /v1/subscribers/{token} p99 with 1,000,000 stored transactions on PostgreSQL (filled with
#     entitle-bench fill-db into SQLite, moved with entitle migrate-storage) against GET /healthz p99
#     of the same instance in the same run.
# PostgreSQL runs as a throw-away cluster (Scripts/postgresql-test-cluster.sh) on the same 2 cores.
# Usage: Benchmarks/postgresql.sh [--quick] [--ingest-only] [--first-purchases]
#   --quick: 100,000 transactions, 40,000 notifications, two rounds (three without); --ingest-only: the three ingest figures;
#   --first-purchases: the ingest load is first purchases of new customers (SUBSCRIBED with its renewal info, a new
#   customer each: a launch or an import) instead of renewals of 5,000 known subscriptions
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
LARGE=1000000; NOTIFICATIONS=80000; ROUNDS=3
INGEST_ONLY=""
SHAPE="renewals"
for argument in "$@"; do
  case "$argument" in
    --quick) LARGE=100000; NOTIFICATIONS=40000; ROUNDS=2 ;;
    --ingest-only) INGEST_ONLY=1 ;;
    --first-purchases) SHAPE="first-purchases" ;;
    *) echo "usage: $0 [--quick] [--ingest-only] [--first-purchases]" >&2; exit 2 ;;
  esac
done
. "$ROOT/Benchmarks/lib.sh"
mkdir -p "$WORK/chain"
chmod 755 "$WORK"
sh "$ROOT/Tests/TestSupport/make-chain.sh" "$WORK/chain"
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$WORK/key.p8" 2>/dev/null
PG_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
SERVER_URL="$("$ROOT/Scripts/postgresql-test-cluster.sh" start "$WORK/pg" "$PG_PORT")"
trap '"$ROOT/Scripts/postgresql-test-cluster.sh" stop "$WORK/pg" || true; [ -n "${SECOND_PID:-}" ] && kill "$SECOND_PID" 2>/dev/null; cleanup' EXIT
database() { local name="bench_$1"; psql "$SERVER_URL" -qc "CREATE DATABASE $name" >/dev/null; echo "${SERVER_URL%/postgres}/$name"; }

config() {  # STORAGE-JSON FILE
  cat > "$2" <<JSON
{"server": {"host": "127.0.0.1", "port": 0}, "rateLimits": {"enabled": false}, "storage": $1,
 "apps": [{"id": "bench", "bundleId": "com.example.app", "environments": ["Sandbox"],
   "signingKey": {"keyId": "BENCHKEY01", "privateKeyFile": "$WORK/key.p8"},
   "apiKeys": [{"key": "client_bench_key_not_secret", "role": "client"}],
   "verification": {"rootCertificates": ["$WORK/chain/root.pem"], "allowPrivateRoots": true},
   "products": {"pro.monthly": {"subscriptionGroup": "G1", "entitlements": ["pro"]}}}]}
JSON
}
start_second() {  # CONFIG → SECOND_PORT
  "$BIN/entitle" serve --config "$1" > "$WORK/second.log" &
  SECOND_PID=$!
  for _ in $(seq 100); do
    SECOND_PORT="$(grep -o '"port":[0-9]*' "$WORK/second.log" 2>/dev/null | head -1 | cut -d: -f2 || true)"
    [ -n "$SECOND_PORT" ] && return 0
    sleep 0.1
  done
  echo "the second instance did not start" >&2; exit 2
}
ingest() {  # PORT CONNECTIONS OUT [PART]   (PART k/n: the k-th of n disjoint parts of the bodies)
  BODIES_FILE="$WORK/bodies.txt" BODIES_PART="${4:-1/1}" WRK_THREADS=1 wrk -t1 -c"$2" -d10s --latency -s "$ROOT/Benchmarks/wrk/ingest.lua" \
    "http://127.0.0.1:$1/v1/notifications/apple" > "$3"
}
rps() { awk '/Requests\/sec/ {print $2}' "$1"; }
p99() { awk '$1 == "99%" {print $2}' "$1"; }
ratio() { python3 -c "import sys; print(round(float(sys.argv[1]) / float(sys.argv[2]), 2))" "$1" "$2"; }

"$BIN/entitle-bench" sign-notifications --chain "$WORK/chain" --count "$NOTIFICATIONS" --shape "$SHAPE" --out "$WORK/bodies.txt"

# The machine's speed drifts by a factor of two within minutes (steal time), so the three ingest
# set-ups run in rounds, one after the other, each round on fresh databases; every ratio is taken
# within a round and the median round is reported.
for round in $(seq "$ROUNDS"); do
  config "{\"sqlite\": \"$WORK/ingest$round.sqlite3\"}" "$WORK/entitle.json"
  start_server; ingest "$PORT" 32 "$WORK/sqlite$round.txt"; stop_server

  config "{\"postgresql\": \"$(database "one$round")\", \"poolSize\": 16}" "$WORK/entitle.json"
  start_server; ingest "$PORT" 32 "$WORK/pg1-$round.txt"; stop_server

  config "{\"postgresql\": \"$(database "two$round")\", \"poolSize\": 16}" "$WORK/entitle.json"
  start_server; start_second "$WORK/entitle.json"
  ingest "$PORT" 16 "$WORK/pg2a-$round.txt" 1/2 &
  INGEST_PID=$!
  ingest "$SECOND_PORT" 16 "$WORK/pg2b-$round.txt" 2/2
  wait "$INGEST_PID"
  stop_server; kill "$SECOND_PID"; wait "$SECOND_PID" || true; SECOND_PID=""
  echo "$(rps "$WORK/sqlite$round.txt") $(rps "$WORK/pg1-$round.txt") $(rps "$WORK/pg2a-$round.txt") $(rps "$WORK/pg2b-$round.txt")" \
    >> "$WORK/rounds.txt"
done

report_ingest() {
  python3 - "$WORK/rounds.txt" <<'PY'
import statistics, sys
rounds = [[float(x) for x in line.split()] for line in open(sys.argv[1])]
rows = [(s, one, a + b) for s, one, a, b in rounds]
for index, (s, one, two) in enumerate(rows, 1):
    print(f"round {index}: SQLite {s:.0f}/s, PostgreSQL one instance {one:.0f}/s ({one / s:.2f} x SQLite), "
          f"two instances {two:.0f}/s ({two / one:.2f} x one instance)")
median = lambda values: round(statistics.median(values), 2)
print(f"ingest, SQLite, one instance: {median([r[0] for r in rows]):.0f} notifications/s durable (median of {len(rows)} rounds)")
print(f"ingest, PostgreSQL, one instance: {median([one / s for s, one, _ in rows])} x SQLite (median of the rounds' ratios)")
print(f"ingest, PostgreSQL, two instances: {median([two / one for _, one, two in rows])} x one instance, "
      f"{median([two / s for s, _, two in rows])} x SQLite")
PY
}
if [ -n "$INGEST_ONLY" ]; then
  echo; echo "== Entitle PostgreSQL ingest of $SHAPE ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, PostgreSQL on the same machine) =="
  report_ingest; exit 0
fi

# Reads with many stored transactions, on PostgreSQL.
FILL=$("$BIN/entitle-bench" fill-db --db "$WORK/large.sqlite3" --transactions "$LARGE" --subscribers "$((LARGE / 10))" | tail -1)
TOKEN=$(python3 -c "import json,sys; print(json.loads(sys.argv[1])['sampleToken'])" "$FILL")
LARGE_URL="$(database large)"
MIGRATE_START=$(date +%s)
"$BIN/entitle" migrate-storage --from "$WORK/large.sqlite3" --to "$LARGE_URL" > "$WORK/migrate.txt"
MIGRATE_SECONDS=$(( $(date +%s) - MIGRATE_START ))
config "{\"postgresql\": \"$LARGE_URL\", \"poolSize\": 16}" "$WORK/entitle.json"
start_server
# Reads and /healthz alternate, in rounds like the ingest figures; each ratio within a round.
for round in $(seq "$ROUNDS"); do
  wrk -t2 -c64 -d10s --latency -H "Authorization: Bearer client_bench_key_not_secret" \
    "http://127.0.0.1:$PORT/v1/subscribers/$TOKEN" > "$WORK/read$round.txt"
  wrk -t2 -c64 -d10s --latency "http://127.0.0.1:$PORT/healthz" > "$WORK/healthz$round.txt"
  echo "$(rps "$WORK/read$round.txt") $(p99 "$WORK/read$round.txt") $(rps "$WORK/healthz$round.txt") $(p99 "$WORK/healthz$round.txt")" \
    >> "$WORK/reads.txt"
done
stop_server

echo
echo "== Entitle PostgreSQL benchmark, ingest of $SHAPE ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, PostgreSQL on the same machine) =="
report_ingest
echo "migrate-storage of $LARGE transactions: ${MIGRATE_SECONDS} s ($(tail -1 "$WORK/migrate.txt"))"
python3 - "$WORK/reads.txt" "$LARGE" <<'PY'
import re, statistics, sys
def ms(text):  # wrk's latency: 812.00us, 16.66ms, 1.02s
    number, unit = re.match(r"([0-9.]+)([a-z]+)", text).groups()
    return float(number) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]
rounds = [line.split() for line in open(sys.argv[1])]
for index, (rps, p99, health_rps, health_p99) in enumerate(rounds, 1):
    print(f"round {index}: GET /v1/subscribers {float(rps):.0f} req/s, p99 {p99}; GET /healthz {float(health_rps):.0f} req/s, "
          f"p99 {health_p99}; {ms(p99) / ms(health_p99):.2f} x")
ratios = [ms(p99) / ms(health_p99) for _, p99, _, health_p99 in rounds]
print(f"GET /v1/subscribers p99 with {sys.argv[2]} stored transactions: {round(statistics.median(ratios), 2)} x /healthz p99 "
      f"of the same instance (median of the rounds' ratios)")
PY
