# Shared by compare.sh and storage.sh (sourced after ROOT is set): a scratch directory removed on
# exit, the release build, and one `entitle serve` at a time on "$WORK/entitle.json".
# Defines WORK, BIN, SERVER_PID and, once started, PORT.
WORK="$(mktemp -d)"
SERVER_PID=""
cleanup() { [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT

swift build -c release --package-path "$ROOT" >&2
BIN="$ROOT/.build/release"

# The configuration asks for port 0; the port the kernel chose is read from the startup log line.
start_server() {
  "$BIN/entitle" serve --config "$WORK/entitle.json" > "$WORK/server.log" &
  SERVER_PID=$!
  for _ in $(seq 100); do
    PORT="$(grep -o '"port":[0-9]*' "$WORK/server.log" 2>/dev/null | head -1 | cut -d: -f2 || true)"
    [ -n "$PORT" ] && return 0
    sleep 0.1
  done
  echo "$(basename "$0"): the server did not start" >&2; exit 2
}

stop_server() { kill "$SERVER_PID"; wait "$SERVER_PID" || true; SERVER_PID=""; }

# The promotional-offer signing load (ratelimit.sh, flood.sh): "$WORK/sign.lua" for wrk, with the
# client key and offer their configurations name.
write_sign_script() {
  cat > "$WORK/sign.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer client_bench_key_not_secret"
wrk.body = '{"productId":"pro.monthly","offerId":"winback50","appAccountToken":"7e3fb20b-4cdb-47cc-936d-99d65f608138"}'
LUA
}

# A test deployment for test-store.sh and populate.sh: a fresh signing chain and key, and
# "$WORK/entitle.json" with the test store on, one app selling a monthly and a yearly plan (on the
# App Store and Google Play) and a consumable, its admin key admin_bench_key_not_secret.
write_test_store_config() {
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$WORK/key.p8" 2>/dev/null
  "$BIN/entitle" test-store init --out "$WORK/chain" > /dev/null
  cat > "$WORK/entitle.json" <<JSON
{"server": {"host": "127.0.0.1", "port": 0}, "rateLimits": {"enabled": false}, "storage": {"sqlite": "$WORK/bench.sqlite3"},
 "testStore": {"enabled": true, "chain": "$WORK/chain"},
 "apps": [{"id": "bench", "bundleId": "com.example.app", "environments": ["Sandbox"], "appAppleId": 1234,
   "signingKey": {"keyId": "BENCHKEY01", "privateKeyFile": "$WORK/key.p8"},
   "apiKeys": [{"key": "admin_bench_key_not_secret", "role": "admin"}],
   "googlePlay": {"packageName": "com.example.app", "serviceAccountKeyFile": "$WORK/chain/google-service-account.json",
     "pubsub": {"audience": "https://entitle.example/v1/notifications/google", "serviceAccountEmail": "rtdn@example.iam.gserviceaccount.com"},
     "jwks": "$WORK/chain/google-jwks.json"},
   "products": {"pro.monthly": {"subscriptionGroup": "G1", "entitlements": ["pro"], "period": "P1M",
                                "googlePlay": {"productId": "pro", "basePlanId": "monthly"}},
                "pro.yearly": {"subscriptionGroup": "G1", "entitlements": ["pro"], "period": "P1Y",
                               "googlePlay": {"productId": "pro", "basePlanId": "yearly"}},
                "gems": {"entitlements": []}}}]}
JSON
}
