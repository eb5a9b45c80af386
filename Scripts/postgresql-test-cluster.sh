#!/usr/bin/env bash
# A throw-away PostgreSQL cluster for the tests, run by a non-root user on a local port.
#   postgresql-test-cluster.sh start DIR PORT   → initdb + pg_ctl start; prints the connection URL
#   postgresql-test-cluster.sh stop DIR         → immediate stop (the folder can then be removed)
#   postgresql-test-cluster.sh restart DIR      → stop and start again on the same port and data
# As root the cluster runs as `nobody` (PostgreSQL refuses to run as root). Exit 3 when no
# PostgreSQL server is installed (the tests then skip with a notice).
set -euo pipefail
command="$1"; dir="$2"
bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)"
[ -x "$bin/initdb" ] || { echo "no PostgreSQL server installed (apt-get install postgresql)" >&2; exit 3; }
as_owner() { if [ "$(id -u)" -eq 0 ]; then runuser -u nobody -- "$@"; else "$@"; fi; }
options() { echo "-p $(cat "$dir/port") -k $dir -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=on"; }
case "$command" in
start)
    mkdir -p "$dir"
    echo "$3" > "$dir/port"
    if [ "$(id -u)" -eq 0 ]; then
        chown -R nobody "$dir"
        chmod o+x "$(dirname "$dir")"   # mktemp -d folders are 0700: let the cluster's user in
    fi
    as_owner "$bin/initdb" -D "$dir/data" -U entitle --auth=trust -E UTF8 > "$dir/initdb.log" 2>&1 < /dev/null
    as_owner "$bin/pg_ctl" -D "$dir/data" -o "$(options)" -l "$dir/server.log" -w start > /dev/null 2>&1 < /dev/null
    echo "postgresql://entitle@127.0.0.1:$3/postgres"
    ;;
stop) as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop > /dev/null 2>&1 < /dev/null ;;
restart)
    as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop > /dev/null 2>&1 < /dev/null
    as_owner "$bin/pg_ctl" -D "$dir/data" -o "$(options)" -l "$dir/server.log" -w start > /dev/null 2>&1 < /dev/null
    ;;
*) echo "usage: $0 start DIR PORT | stop DIR | restart DIR" >&2; exit 2 ;;
esac
