#!/bin/bash
# samples/pgbench.btape: PostgreSQL (Debian's postgresql 15) with its data directory on ext4 on
# a 1 GiB loop device: `pgbench -i -s 10`, then a 10 s TPC-B-like run with 4 clients. The
# server is started and stopped by this script (as user postgres, on a private socket).
. "$(dirname "$0")/sample_lib.sh"
PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
sample_loop 1024
sample_ext4
mkdir -p "$MNT/pg" "$WORK/sock"
mkdir -p "$WORK/log"
chown postgres: "$MNT/pg" "$WORK/sock" "$WORK/log"
as_pg() { runuser -u postgres -- "$@"; }
as_pg "$PGBIN/initdb" -D "$MNT/pg" -A trust >/dev/null
stop_pg() { as_pg "$PGBIN/pg_ctl" -D "$MNT/pg" -m fast -w stop >/dev/null 2>&1 || true; }
trap 'stop_pg; cleanup' EXIT
as_pg "$PGBIN/pg_ctl" -D "$MNT/pg" -l "$WORK/log/pg.log" -w \
	-o "-k $WORK/sock -c listen_addresses= -p 5499 -c shared_buffers=64MB" start >/dev/null
"$BIOTAPE" record -o "$HERE/pgbench.btape" -d "$LOOP" -- \
	runuser -u postgres -- sh -c "$PGBIN/pgbench -h $WORK/sock -p 5499 -i -s 10 -q postgres && $PGBIN/pgbench -h $WORK/sock -p 5499 -c 4 -j 2 -T 10 postgres"
stop_pg
"$BIOTAPE" info "$HERE/pgbench.btape"
