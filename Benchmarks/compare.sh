#!/usr/bin/env bash
# Benchmarks Entitle against the references of ../shared/bench-peer in one run and prints
# `name: value (ratio to reference)` lines (docs/PERFORMANCE.md). Leave the machine idle meanwhile.
#
#   Benchmarks/compare.sh [--quick]        # --quick: 1 round of 5 s instead of 3 × 10 s
#
# Needs ../shared/bench-peer (run its setup.sh once). Entitle is configured like the peer:
# the bench-only key BENCHKEY01, bundle ID com.example.entitle.bench, offer winback50 (rule any).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PEER="${ENTITLE_BENCH_PEER:-$ROOT/../shared/bench-peer}"
[ -f "$PEER/compare.py" ] || { echo "compare.sh: no bench-peer at $PEER" >&2; exit 2; }
WRK_ARGS=(--rounds 3 -d 10)
[ "${1:-}" = "--quick" ] && WRK_ARGS=(--rounds 1 -d 5)

. "$ROOT/Benchmarks/lib.sh"

# config ISSUER → a configuration like the peer's; with an issuer ID the answer also carries the JWS.
# The bench-only verification root is not Apple's, hence allowPrivateRoots.
write_config() {
  local issuer=""
  [ -n "$1" ] && issuer=", \"issuerId\": \"$1\""
  cat > "$WORK/entitle.json" <<JSON
{"server": {"host": "127.0.0.1", "port": 0}, "rateLimits": {"client": {"perSecond": 1000000000, "burst": 1000000000}, "server": {"perSecond": 1000000000, "burst": 1000000000}},
 "apps": [{"id": "bench", "bundleId": "com.example.entitle.bench", "environments": ["Sandbox"],
   "signingKey": {"keyId": "BENCHKEY01", "privateKeyFile": "$PEER/keys/SubscriptionKey_BENCHKEY01.p8"$issuer},
   "verification": {"rootCertificates": ["$PEER/fixtures/verify-root.der"], "allowPrivateRoots": true},
   "apiKeys": [{"key": "client_bench_key_not_secret", "role": "client"}, {"key": "server_bench_key_not_secret", "role": "server"}],
   "products": {"pro.monthly": {"subscriptionGroup": "1", "entitlements": ["pro"]}},
   "offers": {"winback50": {"productId": "pro.monthly", "offerIdentifier": "winback50", "eligibility": "any"}}}]}
JSON
}


rss_kb() { awk '/VmRSS/ {print $2}' "/proc/$SERVER_PID/status"; }

run_compare() {  # kind path extra-args…  (--target-pid: the server's CPU time per request)
  local kind="$1" path="$2"; shift 2
  python3 "$PEER/compare.py" --target "http://127.0.0.1:$PORT$path" --kind "$kind" --target-pid "$SERVER_PID" \
    "${WRK_ARGS[@]}" "$@" 2>"$WORK/compare-$kind.err" | tail -n 1
}

field() { python3 -c "import json,sys; d=json.loads(sys.argv[1]); print(eval(sys.argv[2], {}, {'d': d}))" "$1" "$2"; }

write_config ""
start_server
sleep 0.5
IDLE_RSS=$(rss_kb)
python3 - "$PORT" <<'PY' &
import socket, sys, time
conns = [socket.create_connection(("127.0.0.1", int(sys.argv[1]))) for _ in range(1000)]
time.sleep(4)
PY
HOLDER=$!
sleep 3
OPEN_RSS=$(rss_kb)
wait $HOLDER || true

HEALTHZ=$(run_compare healthz /healthz)
SIGN=$(run_compare sign /v1/promotional-offers/sign --header "Authorization: Bearer client_bench_key_not_secret")
VERIFY=$(run_compare verify /v1/verify --header "Authorization: Bearer server_bench_key_not_secret")
stop_server

write_config "57246542-96fe-1a63-e053-0824d011072a"
start_server
SIGN_JWS=$(run_compare sign-jws /v1/promotional-offers/sign --header "Authorization: Bearer client_bench_key_not_secret" --label target-v1+jws)
stop_server

CEILING=$(bash "$PEER/crypto-ceiling.sh" 3 1 2>/dev/null)
INPROCESS=$("$BIN/entitle-bench" --seconds 3 | grep '^{')
VENV="${ENTITLE_BENCH_DIR:-${TMPDIR:-/tmp}/entitle-bench-peer}/venv"
PYTHON=$("$VENV/bin/python" "$ROOT/Benchmarks/python_reference.py" "$PEER" 3)
PY_SIGN=$(echo "$PYTHON" | grep python.sign.v1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["value"])')
PY_VERIFY=$(echo "$PYTHON" | grep python.verify.transaction | python3 -c 'import json,sys; print(json.load(sys.stdin)["value"])')

echo
echo "== Entitle benchmark ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores) =="
echo "healthz req/s: $(field "$HEALTHZ" 'd["medians"]["target"]["rps"]') ($(field "$HEALTHZ" 'round(d["ratios"]["target_over_nginx"], 2)') x nginx $(field "$HEALTHZ" 'd["medians"]["nginx"]["rps"]'))"
SIGN1=$(field "$CEILING" 'd["procs_1"]["sign_per_s"]')
# One line per endpoint: req/s, the ratio to the peer (2 workers), p99 against nginx's p99 of the
# same run, and the server's CPU per request (with, for signing, the crypto efficiency: the ECDSA
# time the answer needs at `openssl speed`'s 1-core rate over that CPU time).
report() {  # label result signatures-per-request
  local label="$1" result="$2" signatures="$3"
  local line="$label req/s: $(field "$result" 'd["medians"]["target"]["rps"]') ($(field "$result" 'round(d["ratios"]["target_over_peer_w2"], 2)') x peer-w2 $(field "$result" 'd["medians"]["peer_w2"]["rps"]'); p99 $(field "$result" 'd["medians"]["target"]["p99_ms"]') ms = $(field "$result" 'round(d["medians"]["target"]["p99_ms"] / d["medians"]["nginx"]["p99_ms"], 2)') x nginx p99; CPU $(field "$result" 'd["medians"]["target"].get("cpu_us_per_req")') us/request"
  if [ "$signatures" -gt 0 ]; then
    line="$line; crypto efficiency $(field "$result" "round($signatures / $SIGN1 * 1e6 / d['medians']['target']['cpu_us_per_req'], 2)")"
  fi
  echo "$line)"
}
report "sign (v1)" "$SIGN" 1
report "sign (v1 + JWS)" "$SIGN_JWS" 2
report "verify" "$VERIFY" 0
VERIFY1=$(field "$CEILING" 'd["procs_1"]["verify_per_s"]')
while read -r line; do
  name=$(field "$line" 'd["name"]'); value=$(field "$line" 'd["value"]')
  case "$name" in
    sign.v1) echo "$name: $value ops/s ($(python3 -c "print(round($value/$SIGN1, 2))") x openssl speed sign $SIGN1; $(python3 -c "print(round($value/$PY_SIGN, 2))") x Apple's Python library $PY_SIGN)";;
    sign.*) echo "$name: $value ops/s ($(python3 -c "print(round($value/$SIGN1, 2))") x openssl speed sign $SIGN1)";;
    verify.transaction.*) echo "$name: $value ops/s ($(python3 -c "print(round($value/$VERIFY1, 2))") x openssl speed verify $VERIFY1; $(python3 -c "print(round($value/$PY_VERIFY, 1))") x Apple's Python library $PY_VERIFY)";;
    ecdsa.verify) echo "$name: $value ops/s ($(python3 -c "print(round($value/$VERIFY1, 2))") x openssl speed verify $VERIFY1)";;
    *) echo "$name: $value ops/s";;
  esac
done <<< "$INPROCESS"
echo "RSS idle: $((IDLE_RSS / 1024)) MB; with 1000 open idle connections: $((OPEN_RSS / 1024)) MB"
