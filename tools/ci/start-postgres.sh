#!/usr/bin/env bash
# Starts a throwaway PostgreSQL server for the @agl/store PostgreSQL tests and prints the one line to eval:
#
#   eval "$(tools/ci/start-postgres.sh)"   # sets AGL_TEST_PG_URL=postgres://postgres@127.0.0.1:55432/agl_test
#
# - Installs Debian's `postgresql` when no server binaries are found (CI: a fresh Debian machine, run as root).
# - Creates its own cluster in a temp data directory ($AGL_PG_DIR, default /tmp/agl-pg), owned by the `postgres` user
#   when run as root (initdb refuses root), trust auth on 127.0.0.1 only, listening on $AGL_PG_PORT (default 55432).
# - Creates the database `agl_test`. Idempotent: a second run finds the server up and only prints the line again.
# - `tools/ci/start-postgres.sh stop` stops the server.
# Everything but the final `export ...` line goes to stderr.
set -euo pipefail

DATA_PARENT="${AGL_PG_DIR:-/tmp/agl-pg}"
DATA="$DATA_PARENT/data"
DB="${AGL_PG_DB:-agl_test}"
# The port of a server this script started before wins; else $AGL_PG_PORT, else the first free one from 55432.
PORT="${AGL_PG_PORT:-$(cat "$DATA_PARENT/port" 2>/dev/null || echo 55432)}"

log() { echo "start-postgres: $*" >&2; }

find_bin() {
  local dir
  for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then echo "$dir"; return 0; fi
  done
  return 1
}

BIN="$(find_bin || true)"
if [ -z "$BIN" ]; then
  if [ "$(id -u)" != "0" ]; then
    log "no PostgreSQL server binaries under /usr/lib/postgresql and not root: install Debian's 'postgresql' package first."
    exit 1
  fi
  log "installing Debian's postgresql package"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update >&2
  apt-get install -y --no-install-recommends postgresql >&2
  BIN="$(find_bin)"
fi

# Runs a command as the cluster owner: `postgres` when we are root, ourselves otherwise.
as_owner() {
  if [ "$(id -u)" = "0" ]; then
    su postgres -s /bin/bash -c "$(printf '%q ' "$@")"
  else
    "$@"
  fi
}

if [ "${1:-}" = "stop" ]; then
  if [ -f "$DATA/postmaster.pid" ]; then as_owner "$BIN/pg_ctl" -D "$DATA" -m fast -w stop >&2 || true; fi
  exit 0
fi

if "$BIN/pg_isready" -q -h 127.0.0.1 -p "$PORT" 2>/dev/null; then
  log "a server already answers on 127.0.0.1:$PORT"
else
  mkdir -p "$DATA_PARENT"
  if [ "$(id -u)" = "0" ]; then chown postgres "$DATA_PARENT"; fi
  if [ ! -f "$DATA/PG_VERSION" ]; then
    log "initdb $DATA ($BIN)"
    as_owner "$BIN/initdb" -D "$DATA" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 >&2 \
      || as_owner "$BIN/initdb" -D "$DATA" -U postgres --auth=trust --encoding=UTF8 --no-locale >&2
  fi
  if [ -f "$DATA/postmaster.pid" ]; then as_owner "$BIN/pg_ctl" -D "$DATA" -m immediate stop >&2 2>/dev/null || true; fi
  started=""
  # A port can be busy (another service, or a client's TIME_WAIT in the ephemeral range): try the next ones.
  for try in 0 1 2 3 4 5 6 7 8 9; do
    log "starting on 127.0.0.1:$PORT"
    # Tests open a pool per store; the two-server tests open several. fsync off: a test cluster, speed over durability.
    if as_owner "$BIN/pg_ctl" -D "$DATA" -l "$DATA_PARENT/server.log" -w -t 60 \
      -o "-h 127.0.0.1 -p $PORT -k $DATA_PARENT -c max_connections=300 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
      start >&2; then
      started=1
      break
    fi
    tail -n 3 "$DATA_PARENT/server.log" >&2 || true
    PORT=$((PORT + 1))
  done
  if [ -z "$started" ]; then log "could not start PostgreSQL; see $DATA_PARENT/server.log"; exit 1; fi
  echo "$PORT" > "$DATA_PARENT/port"
fi
URL="postgres://postgres@127.0.0.1:${PORT}/${DB}"

if ! "$BIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$DB'" | grep -q 1; then
  log "creating database $DB"
  "$BIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -qc "CREATE DATABASE \"$DB\"" >&2
fi

echo "export AGL_TEST_PG_URL=$URL"
