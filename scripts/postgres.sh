#!/usr/bin/env bash
# A throwaway PostgreSQL server on 127.0.0.1 for the test suite.
#
#   bash scripts/postgres.sh start   # installs PostgreSQL from the system's packages when missing,
#                                    # starts it with a fresh data directory, prints its URL (last line)
#   bash scripts/postgres.sh stop    # stops it and removes the data directory
#
# PostgreSQL refuses to run as root, so as root the server runs as the `postgres` system user.
# Diagnostics go to stderr; stdout carries only the URL.
set -euo pipefail

# One state directory per checkout, so two clones (a developer's and CI's) never stop each other's server.
checkout_key=$(cd "$(dirname "$0")/.." && pwd -P | cksum | cut -d' ' -f1)
state_dir="${TOOLREPLAY_PG_STATE:-${TMPDIR:-/tmp}/toolreplay-test-pg-$checkout_key}"
log() { printf 'postgres.sh: %s\n' "$*" >&2; }

find_bindir() {
  local d
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then echo "$d"; return 0; fi
  done
  if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
    dirname "$(command -v initdb)"; return 0
  fi
  return 1
}

install_pg() {
  if [ "$(id -u)" != 0 ]; then
    log "PostgreSQL is not installed and this user cannot install it (not root)"; return 1
  fi
  log "installing PostgreSQL from the system's packages"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2 && apt-get install -y -qq postgresql >&2
}

free_port() {
  python3 - <<'PY'
import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
s.close()
PY
}

as_owner() {
  if [ "$(id -u)" = 0 ]; then
    # cd / first: the postgres user may not be allowed into the caller's working directory.
    (cd / && su postgres -s /bin/sh -c "$*")
  else
    sh -c "$*"
  fi
}

start() {
  local bindir port data
  bindir=$(find_bindir) || { install_pg && bindir=$(find_bindir); } || { log "no PostgreSQL available"; exit 1; }
  stop_quiet
  mkdir -p "$state_dir"
  data="$state_dir/data"
  if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || useradd --system --home "$state_dir" postgres
    chown -R postgres "$state_dir"
  fi
  port=$(free_port)
  as_owner "'$bindir/initdb' -D '$data' -U toolreplay --auth=trust -E UTF8 >/dev/null"
  as_owner "'$bindir/pg_ctl' -D '$data' -l '$state_dir/server.log' -w -t 60 \
      -o \"-c listen_addresses=127.0.0.1 -p $port -k '$state_dir' -c max_connections=200 -c fsync=off\" start >/dev/null"
  echo "$bindir" > "$state_dir/bindir"
  log "started on 127.0.0.1:$port (data in $data)"
  echo "postgresql://toolreplay@127.0.0.1:$port/postgres"
}

stop_quiet() {
  if [ -f "$state_dir/bindir" ] && [ -d "$state_dir/data" ]; then
    as_owner "'$(cat "$state_dir/bindir")/pg_ctl' -D '$state_dir/data' -m fast -w stop >/dev/null 2>&1" || true
  fi
  rm -rf "$state_dir"
}

case "${1:-}" in
  start) start ;;
  stop) stop_quiet; log "stopped" ;;
  *) log "usage: bash scripts/postgres.sh start|stop"; exit 2 ;;
esac
