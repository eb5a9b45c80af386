#!/usr/bin/env bash
# Events benchmark (issue: "ingest with two webhook endpoints ≥ 0.8 × without"), as `name: value`
# lines. The same distinct signed DID_RENEW notifications (each one new transaction, so one RENEWAL
# event each) are posted by wrk (-t2 -c32, 10 s) to a fresh database twice in one run:
#   1. with no webhook endpoint (events are still derived and written to the outbox),
#   2. with two HTTPS endpoints (nginx on loopback answering 204, a private CA), delivered while
#      the load runs; afterwards the time until every delivery is settled is measured too.
# Usage: Benchmarks/events.sh [--quick]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
NOTIFICATIONS=40000
[ "${1:-}" = "--quick" ] && NOTIFICATIONS=10000
. "$ROOT/Benchmarks/lib.sh"
mkdir -p "$WORK/chain" "$WORK/nginx"
sh "$ROOT/Tests/TestSupport/make-chain.sh" "$WORK/chain"
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$WORK/key.p8" 2>/dev/null

# The receiver: nginx with a leaf for 127.0.0.1 signed by a throw-away CA.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$WORK/ca.key" -out "$WORK/ca.pem" -days 1 \
  -subj "/CN=bench CA" -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$WORK/leaf.key" -out "$WORK/leaf.csr" -subj "/CN=127.0.0.1" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\n' > "$WORK/leaf.ext"
openssl x509 -req -in "$WORK/leaf.csr" -CA "$WORK/ca.pem" -CAkey "$WORK/ca.key" -CAcreateserial -out "$WORK/leaf.pem" -days 1 \
  -extfile "$WORK/leaf.ext" 2>/dev/null
RECEIVER_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$WORK/nginx/nginx.conf" <<CONF
worker_processes 1; daemon off; pid $WORK/nginx/nginx.pid; error_log $WORK/nginx/error.log;
events { worker_connections 1024; }
http {
  access_log off; client_body_temp_path $WORK/nginx; proxy_temp_path $WORK/nginx; fastcgi_temp_path $WORK/nginx;
  uwsgi_temp_path $WORK/nginx; scgi_temp_path $WORK/nginx; keepalive_requests 100000;
  server { listen 127.0.0.1:$RECEIVER_PORT ssl; ssl_certificate $WORK/leaf.pem; ssl_certificate_key $WORK/leaf.key;
           location / { return 204; } }
}
CONF
nginx -c "$WORK/nginx/nginx.conf" -p "$WORK/nginx" &
NGINX_PID=$!
trap 'kill $NGINX_PID 2>/dev/null; cleanup' EXIT
SECRET="whsec_$(head -c 32 /dev/urandom | base64)"

start_server_on() {  # DB WEBHOOKS
  cat > "$WORK/entitle.json" <<JSON
{"server": {"host": "127.0.0.1", "port": 0}, "rateLimits": {"enabled": false}, "storage": {"sqlite": "$1"}, "delivery": {"caFile": "$WORK/ca.pem"},
 "apps": [{"id": "bench", "bundleId": "com.example.app", "environments": ["Sandbox"],
   "signingKey": {"keyId": "BENCHKEY01", "privateKeyFile": "$WORK/key.p8"},
   "verification": {"rootCertificates": ["$WORK/chain/root.pem"], "allowPrivateRoots": true},
   "products": {"pro.monthly": {"subscriptionGroup": "G1", "entitlements": ["pro"]}},
   "webhooks": [$2]}]}
JSON
  start_server
}

ingest() {  # NAME DB WEBHOOKS → "rps p99 events"
  start_server_on "$2" "$3"
  BODIES_FILE="$WORK/bodies.txt" WRK_THREADS=2 wrk -t2 -c32 -d10s --latency -s "$ROOT/Benchmarks/wrk/ingest.lua" \
    "http://127.0.0.1:$PORT/v1/notifications/apple" > "$WORK/wrk-$1.txt"
  local start=$(date +%s.%N)
  if [ -n "$3" ]; then
    for _ in $(seq 600); do
      [ "$(sqlite3 "$2" "SELECT count(*) FROM deliveries WHERE status = 'pending'")" = "0" ] && break
      sleep 0.1
    done
  fi
  local drained=$(python3 -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 1))" "$start" "$(date +%s.%N)")
  stop_server
  echo "$(awk '/Requests\/sec/ {print $2}' "$WORK/wrk-$1.txt") $(awk '$1 == "99%" {print $2}' "$WORK/wrk-$1.txt")" \
    "$(sqlite3 "$2" "SELECT count(*) FROM events")" "$(sqlite3 "$2" "SELECT count(*) FROM deliveries WHERE status = 'delivered'")" \
    "$drained"
}

"$BIN/entitle-bench" sign-notifications --chain "$WORK/chain" --count "$NOTIFICATIONS" --out "$WORK/bodies.txt"
read -r BASE_RPS BASE_P99 BASE_EVENTS _ _ <<< "$(ingest plain "$WORK/plain.sqlite3" "")"
HOOKS="{\"url\": \"https://127.0.0.1:$RECEIVER_PORT/a\", \"secret\": \"$SECRET\"}, {\"url\": \"https://127.0.0.1:$RECEIVER_PORT/b\", \"secret\": \"$SECRET\"}"
read -r HOOK_RPS HOOK_P99 HOOK_EVENTS DELIVERED DRAINED <<< "$(ingest hooks "$WORK/hooks.sqlite3" "$HOOKS")"

echo
echo "== Entitle events benchmark ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores) =="
echo "ingest, no webhooks: $BASE_RPS notifications/s durable, p99 $BASE_P99, events written $BASE_EVENTS"
echo "ingest, two HTTPS webhook endpoints: $HOOK_RPS notifications/s durable, p99 $HOOK_P99, events written $HOOK_EVENTS"
echo "ratio with/without webhooks: $(python3 -c "import sys; print(round(float(sys.argv[1]) / float(sys.argv[2]), 2))" "$HOOK_RPS" "$BASE_RPS")"
echo "deliveries settled: $DELIVERED delivered; backlog drained ${DRAINED} s after the load stopped"
