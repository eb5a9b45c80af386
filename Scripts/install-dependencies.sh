#!/usr/bin/env bash
# Installs the Debian packages Entitle needs to build and test, and nothing else. Used by the
# README's two opening commands (through `make`), by `.ci/run`, and safe to run again: packages
# already installed are skipped, and it asks for root (sudo) only when something is missing.
set -euo pipefail

# Build: libssl-dev (Crypto: libcrypto), libcurl4-openssl-dev (HTTPClient), libsqlite3-dev and
# libpq-dev (Storage), pkg-config (finds them). Tests: openssl (independent signature checks, test
# chains), python3-cryptography (independent JWS verifier), sqlite3 (inspects a test database),
# nginx (`nginx -t` of the deployment site), postgresql (a throw-away cluster for the PostgreSQL
# store); clang's fuzzer runtime comes with the Swift toolchain.
packages=(libssl-dev libcurl4-openssl-dev libsqlite3-dev libpq-dev pkg-config)
if [ "${1:-}" = "--tests" ]; then
    packages+=(sqlite3 openssl python3 python3-cryptography nginx postgresql)
fi

missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[ "${#missing[@]}" -eq 0 ] && exit 0

echo "installing Debian packages: ${missing[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
# Packages such as nginx start their service on install; the tests start what they need
# themselves, so keep services from starting (the usual policy-rc.d of containers).
policy=""
if [ ! -e /usr/sbin/policy-rc.d ]; then
    policy=/usr/sbin/policy-rc.d
    printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
    $sudo chmod +x "$policy"
fi
trap '[ -n "$policy" ] && $sudo rm -f "$policy"' EXIT
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
