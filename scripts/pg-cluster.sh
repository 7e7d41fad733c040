#!/usr/bin/env bash
# A throwaway PostgreSQL 15 cluster for the store tests (and .ci/run).
#   scripts/pg-cluster.sh start DIR   → initialises DIR, starts it on a free loopback port, prints its URL
#   scripts/pg-cluster.sh stop DIR    → stops it and removes DIR
# As root (CI), the cluster runs as the `postgres` OS user, since PostgreSQL refuses to run as root.
set -euo pipefail
bin=${PG_BIN:-/usr/lib/postgresql/15/bin}
cmd=${1:?start or stop}
dir=$(realpath -m "${2:?a folder for the cluster}")
as_owner() {
  # From / : the postgres user may not enter the caller's working folder.
  if [ "$(id -u)" -eq 0 ]; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi
}
case "$cmd" in
  start)
    mkdir -p "$dir"
    if [ "$(id -u)" -eq 0 ]; then chown postgres "$dir"; fi
    as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 >/dev/null
    port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=on" start >/dev/null
    as_owner "$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres twinlock
    echo "postgres://postgres@127.0.0.1:$port/twinlock"
    ;;
  stop)
    if [ -d "$dir/data" ]; then as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true; fi
    rm -rf "$dir"
    ;;
  *) echo "usage: $0 start|stop DIR" >&2; exit 2 ;;
esac
