#!/usr/bin/env bash
# pg.sh: a throwaway PostgreSQL cluster for tests.
#
#   eval "$(scripts/pg.sh start)"   # prints export lines: BULLPEN_TEST_POSTGRES_URL, BULLPEN_PG_DIR
#   scripts/pg.sh stop [DIR]        # stops the cluster and removes DIR (default $BULLPEN_PG_DIR)
#
# The cluster lives in a temp dir (data, log, unix socket), listens on a free
# port on 127.0.0.1, trusts local connections and runs with fsync=off
# (tests), or with PostgreSQL's durable defaults when BULLPEN_PG_DURABLE=1
# (benchmarks: every commit reaches the disk, as in production).
# As root, initdb and pg_ctl run as the postgres user; PostgreSQL is
# installed with apt when its binaries are missing. Progress goes to stderr.
set -euo pipefail

log() { printf 'pg.sh: %s\n' "$*" >&2; }

find_pgbin() {
	if [ -n "${PGBIN:-}" ] && [ -x "$PGBIN/pg_ctl" ]; then
		echo "$PGBIN"
		return
	fi
	if [ -x /usr/lib/postgresql/15/bin/pg_ctl ]; then
		echo /usr/lib/postgresql/15/bin
		return
	fi
	# another major version, newest first
	local d
	for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5 -rn); do
		if [ -x "$d/pg_ctl" ]; then
			echo "$d"
			return
		fi
	done
}

ensure_pgbin() {
	local bin
	bin=$(find_pgbin)
	if [ -z "$bin" ]; then
		if [ "$(id -u)" != 0 ]; then
			log "PostgreSQL binaries not found and not root: install postgresql"
			exit 1
		fi
		log "installing postgresql"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >&2 ||
			{ apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >&2; }
		bin=$(find_pgbin)
		[ -n "$bin" ] || { log "postgresql installed but pg_ctl not found"; exit 1; }
	fi
	echo "$bin"
}

# as_pg runs a command as the postgres user when root (initdb refuses root).
as_pg() {
	if [ "$(id -u)" = 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

start() {
	local bin dir port tries fast="-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
	[ "${BULLPEN_PG_DURABLE:-}" = 1 ] && fast=""
	bin=$(ensure_pgbin)
	dir=$(mktemp -d "${TMPDIR:-/tmp}/bullpen-pg.XXXXXX")
	chmod 755 "$dir"
	if [ "$(id -u)" = 0 ]; then chown postgres: "$dir"; fi
	as_pg "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 -N >"$dir/initdb.log" 2>&1 ||
		{ cat "$dir/initdb.log" >&2; log "initdb failed"; exit 1; }
	for tries in 1 2 3 4 5 6 7 8; do
		port=$((20000 + RANDOM % 40000))
		port_free "$port" || continue
		if as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/pg.log" -w -t 60 \
			-o "-c listen_addresses=127.0.0.1 -p $port -k $dir $fast -c max_connections=200" \
			start >&2; then
			echo "$port" >"$dir/port"
			log "PostgreSQL ($bin) on 127.0.0.1:$port, dir $dir"
			printf 'export BULLPEN_PG_DIR=%q\n' "$dir"
			printf 'export BULLPEN_TEST_POSTGRES_URL=%q\n' "postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
			return
		fi
		log "start on port $port failed (try $tries)"
	done
	cat "$dir/pg.log" >&2 || true
	rm -rf "$dir"
	log "could not start PostgreSQL"
	exit 1
}

stop() {
	local dir=${1:-${BULLPEN_PG_DIR:-}} bin
	[ -n "$dir" ] || { log "stop: no dir given and BULLPEN_PG_DIR unset"; exit 1; }
	[ -d "$dir" ] || return 0
	bin=$(find_pgbin)
	if [ -n "$bin" ] && [ -f "$dir/data/postmaster.pid" ]; then
		as_pg "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || log "pg_ctl stop failed"
	fi
	rm -rf "$dir"
}

case "${1:-}" in
start) start ;;
stop) stop "${2:-}" ;;
*)
	echo "usage: $0 start | stop [DIR]" >&2
	exit 2
	;;
esac
