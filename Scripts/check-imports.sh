#!/usr/bin/env bash
# The rule of docs/ARCHITECTURE.md, checked: each C library is imported by exactly one module, with
# `internal import` so nothing above it sees C types. The package graph already keeps other
# modules from depending on the C targets; this keeps a stray `import COpenSSL` from slipping in
# through a transitive module map. Exit 1 with the offending lines.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
check() {  # module owner-folders...
    local module="$1"; shift
    local allowed="$*"
    while IFS= read -r line; do
        file="${line%%:*}"
        owner="$(echo "$file" | cut -d/ -f2)"
        if ! [[ " $allowed " == *" $owner "* ]]; then
            echo "only $allowed may import $module: $line"; status=1
        elif ! echo "$line" | grep -qE ":[0-9]+:internal import $module\$"; then
            echo "$module must be imported with 'internal import': $line"; status=1
        fi
    done < <(grep -rnE "^(@_implementationOnly |internal |public |package )?import $module\$" Sources Tests Benchmarks || true)
}
check COpenSSL Crypto CShims
check CShims Crypto
check CSQLite Storage
check CPostgreSQL Storage
check CCurl HTTPClient CCurlShims
check CCurlShims HTTPClient
check CLinux HTTP
if [ "$status" -eq 0 ]; then echo "imports: each C module is imported by its one owner, internally"; fi
exit "$status"
