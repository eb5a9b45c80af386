#!/usr/bin/env bash
# `entitle test-store populate` at size: 10,000 customers over 12 months (seed 7) on SQLite, each
# step's notification signed, posted to the server's own route, verified and stored. Prints the
# population's summary, the wall time and the peak resident memory (GNU time). Target: ≤ 5 minutes,
# memory flat (docs/PERFORMANCE.md).
# Usage: Benchmarks/populate.sh [CUSTOMERS] [MONTHS]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CUSTOMERS="${1:-10000}"
MONTHS="${2:-12}"
. "$ROOT/Benchmarks/lib.sh"
write_test_store_config
/usr/bin/time -v "$BIN/entitle" test-store populate --config "$WORK/entitle.json" --customers "$CUSTOMERS" --months "$MONTHS" \
  --seed 7 2> "$WORK/time.txt"
grep -E "Elapsed \(wall clock\)|Maximum resident set size" "$WORK/time.txt"
