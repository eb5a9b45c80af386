#!/usr/bin/env bash
# Installs the Debian packages Entitle needs to build and test, and nothing else. Used by the
# README's two opening commands (through `make`), by `.ci/run`, and safe to run again: packages
# already installed are skipped, and it asks for root (sudo) only when something is missing.
set -euo pipefail

# Build: libssl-dev (Crypto: libcrypto), libcurl4-openssl-dev (HTTPClient), libsqlite3-dev and
# libpq-dev (Storage), pkg-config (finds them). Tests: openssl (independent signature checks, test
# chains), python3-cryptography (independent JWS verifier), sqlite3 (inspects a test database),
# nginx (`nginx -t` of the deployment site), postgresql (a throw-away cluster for the PostgreSQL
# store), chromium, chromium-driver and python3-venv (the console's tests in a real browser, with
# Selenium from PyPI in .build/test-python), systemd and python3-seccomp (the server run under the
# shipped units' system-call filter: `systemd-analyze syscall-filter` lists the sets, libseccomp
# applies them), curl (the README's tour, run as written), nodejs (`node --check` and `node --test` of the console's
# scripts); clang's fuzzer runtime comes with the Swift toolchain.
packages=(libssl-dev libcurl4-openssl-dev libsqlite3-dev libpq-dev pkg-config)
tests=false
if [ "${1:-}" = "--tests" ]; then
    tests=true
    packages+=(sqlite3 openssl python3 python3-cryptography python3-venv nginx postgresql chromium chromium-driver fonts-dejavu-core
        systemd python3-seccomp curl nodejs)
fi

# The tests' tools from PyPI, pinned, in a virtualenv of the project's own that also sees Debian's
# packages (python3-cryptography): the system's Python stays as it is. Selenium drives the browser
# tests; openapi-spec-validator and schemathesis check docs/openapi.json and the running server;
# Apple's app-store-server-library decodes what the test store signs; Google's google-auth checks the
# test store's Pub/Sub push tokens, and google-api-python-client (with its androidpublisher discovery
# document) reads the Play Developer API the test store serves.
test_python_packages=("selenium==4.51.0" "openapi-spec-validator==0.9.0" "schemathesis==4.32.5" "app-store-server-library==3.1.2"
    "google-auth==2.40.3" "google-api-python-client==2.187.0" "growthbook==4.0.0")
install_test_python() {
    local venv
    venv="$(cd "$(dirname "$0")/.." && pwd)/.build/test-python"
    local present=0
    if [ -x "$venv/bin/python3" ]; then
        present="$("$venv/bin/python3" -m pip freeze 2>/dev/null | grep -cxF -f <(printf '%s\n' "${test_python_packages[@]}") || true)"
    fi
    if [ "$present" -eq "${#test_python_packages[@]}" ]; then return 0; fi
    echo "installing ${test_python_packages[*]} (PyPI) into $venv" >&2
    /usr/bin/python3 -m venv --system-site-packages "$venv"
    "$venv/bin/python3" -m pip install --quiet --disable-pip-version-check "${test_python_packages[@]}"
}

missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ "${#missing[@]}" -eq 0 ]; then
    if $tests; then install_test_python; fi
    exit 0
fi

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
if $tests; then install_test_python; fi
