#!/bin/bash
# Profiles with phases on a real database (issue #19): PostgreSQL (Debian's, run as user
# postgres on a private socket) with its data directory on ext4 on a loop device over /dev/shm;
# `pgbench -c 4` runs PRE_S seconds, a CHECKPOINT is forced, pgbench runs POST_S seconds more;
# `biotape record` records it all. `biotape profile --phases auto` must find the checkpoint:
# a phase boundary within two detection windows of the CHECKPOINT's start (CLOCK_MONOTONIC,
# the recorder's clock). The phased job then runs on a fresh loop device while recording, and
# `biotape compare --json` scores it per phase (IOPS, mix, sizes), beside the flat job.
#
# usage (root): BIOTAPE=build/bin/biotape bench/analyze/phases_pgbench.sh [OUTDIR]
#   PRE_S (8), POST_S (10): seconds of pgbench before and after the CHECKPOINT
#   SCALE (20): pgbench -s; SHARED_BUFFERS (256MB)
# Prints one line per figure; exit 0 when the checkpoint is found and the targets are met,
# 1 otherwise, 77 when PostgreSQL or fio is absent.
set -u
HERE=$(cd "$(dirname "$0")/../.." && pwd)
export BIOTAPE_SRC=$HERE
. "$HERE/tests/lib.sh"
require_root fio losetup python3 runuser mkfs.ext4
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -n "$PGBIN" ] && [ -x "$PGBIN/pgbench" ] || skip "needs PostgreSQL (postgresql)"
id postgres >/dev/null 2>&1 || skip "needs the postgres user"
PRE_S=${PRE_S:-8}
POST_S=${POST_S:-10}
SCALE=${SCALE:-20}
SHARED_BUFFERS=${SHARED_BUFFERS:-256MB}
D=$(t_tmpdir)
OUT=${1:-}
chmod 755 "$T_ROOT" "$D"
t_loop 1024
PG_DEV=$LOOP
t_ext4 -L biotape-pg
R=$D/run # postgres' own: socket, server log, pgbench's output, the CHECKPOINT's times
mkdir -p "$MNT/pg" "$R"
chown postgres: "$MNT/pg" "$R"
as_pg() { runuser -u postgres -- "$@"; }
PGOPTS="-h $R -p 5499"
stop_pg() { as_pg "$PGBIN/pg_ctl" -D "$MNT/pg" -m fast -w stop >/dev/null 2>&1 || true; }
trap 'stop_pg; [ -n "$OUT" ] && mkdir -p "$OUT" && cp "$D"/*.btape "$D"/*.fio "$D"/*.json "$OUT/" 2>/dev/null; t_cleanup' EXIT
as_pg "$PGBIN/initdb" -D "$MNT/pg" -A trust >"$D/initdb.log" 2>&1 || fail "initdb: $(tail -2 "$D/initdb.log")"
# no checkpoint but the forced one: a long timeout, a large max_wal_size
as_pg "$PGBIN/pg_ctl" -D "$MNT/pg" -l "$R/pg.log" -w -o "-k $R -c listen_addresses= -p 5499 \
-c shared_buffers=$SHARED_BUFFERS -c checkpoint_timeout=1h -c max_wal_size=4GB \
-c checkpoint_completion_target=0.9" start >/dev/null || fail "pg_ctl start: $(tail -2 "$R/pg.log")"
as_pg "$PGBIN/pgbench" $PGOPTS -i -s "$SCALE" -q postgres >"$D/init.log" 2>&1 || fail "pgbench -i: $(tail -2 "$D/init.log")"
as_pg "$PGBIN/psql" $PGOPTS -q -c CHECKPOINT postgres || fail "first CHECKPOINT"
sync
# the run: pgbench in the background, the CHECKPOINT PRE_S seconds in; its start on the
# recorder's clock (CLOCK_MONOTONIC) goes to ckpt.ns
cat >"$R/run.sh" <<RUN
$PGBIN/pgbench $PGOPTS -c 4 -j 2 -T $((PRE_S + POST_S)) postgres >$R/pgbench.log 2>&1 &
sleep $PRE_S
python3 -c 'import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC))' >$R/ckpt.ns
$PGBIN/psql $PGOPTS -q -c CHECKPOINT postgres
python3 -c 'import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC))' >$R/ckpt_end.ns
wait
RUN
chmod 755 "$R/run.sh"
timeout 120 "$BIOTAPE" record -o "$D/pg.btape" -d "$PG_DEV" -- runuser -u postgres -- bash "$R/run.sh" \
	>"$D/rec.log" 2>&1 || fail "recording pgbench: $(tail -3 "$D/rec.log")"
stop_pg
grep -E "^tps|number of transactions actually" "$R/pgbench.log" | sed 's/^/pgbench: /'
first=$("$BIOTAPE" dump --csv --limit 1 "$D/pg.btape" | tail -1 | cut -d, -f1)
ck=$(( $(cat "$R/ckpt.ns") - first ))
ck_end=$(( $(cat "$R/ckpt_end.ns") - first ))
echo "CHECKPOINT: $(awk -v a=$ck -v b=$ck_end 'BEGIN { printf "%.3f s .. %.3f s after the first I/O", a/1e9, b/1e9 }')"
"$BIOTAPE" profile --phases auto "$D/pg.btape" >"$D/phases.fio" || fail "profile --phases auto"
"$BIOTAPE" profile --phases 1 "$D/pg.btape" >"$D/flat.fio" || fail "profile --phases 1"
grep -E '^; phase [0-9]' "$D/phases.fio"
run_job() { # run_job KIND: KIND.fio on a fresh 1 GiB loop device, recorded, compared
	t_loop 1024
	t_fio_record "$LOOP" "$D/$1.btape" "$D/$1.fio" "$D/rec-$1.log" || fail "$1: recording the job: $(tail -3 "$D/rec-$1.log")"
	"$BIOTAPE" compare --json "$D/pg.btape" "$D/$1.btape" >"$D/cmp-$1.json" || fail "$1: compare"
}
run_job phases
run_job flat
python3 - "$D" "$ck" "$ck_end" <<'PY'
import json, re, sys
d, ck, ck_end = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
# the reads of each phase, from its main job's comment: reads are not judged on sizes in a phase
# with fewer than MIN_READS (pgbench reads 1-5 times in a phase: one read of 8 KiB against one
# of 4 KiB is a TVD of 1); writes always are (the main job's count leaves out its -flush job's)
MIN_READS = 100
reads, k = {}, 0
for line in open("%s/phases.fio" % d):
    if line.startswith("["):
        m = re.match(r"\[phase(\d+)\]$", line.strip())
        k = int(m.group(1)) if m else 0
        continue
    m = re.match(r"; reads .*\(([\d,]+) reads, ", line)
    if m and k:
        reads[k] = int(m.group(1).replace(",", ""))
# the detection window: 1/100 of the trace (the default --window)
f = {k: json.load(open("%s/cmp-%s.json" % (d, k)))["fidelity"] for k in ("phases", "flat")}
ph = f["phases"]["phases"]
window = (ph[-1]["to_ns"] - ph[0]["from_ns"]) / 100
starts = [p["from_ns"] for p in ph[1:]]
near = min((abs(s - ck) for s in starts), default=float("inf"))
print("phases found: %d; boundaries at %s s; CHECKPOINT at %.3f s; nearest boundary %.3f s away "
      "(%.1f windows of %.3f s)" % (len(ph), ", ".join("%.3f" % (s / 1e9) for s in starts),
      ck / 1e9, near / 1e9, near / window, window / 1e9))
ok = near <= 2 * window
for kind in ("phases", "flat"):
    g = f[kind]
    print("%-6s IOPS correlation %.3f over %d windows, gap KS %.3f, peak-to-mean B/A %.3f, "
          "working set B/A %.3f" % (kind, g["iops_window_correlation"] or float("nan"),
          g["windows"], g["interarrival_ks"], g["peak_to_mean"]["ratio_b_over_a"] or float("nan"),
          g["working_set_blocks"]["ratio_b_over_a"]))
    for k, p in enumerate(g["phases"]):
        tv = p["size_tvd"]
        print("  phase %d %.2f..%.2f s: IOPS %.0f vs %.0f (B/A %.3f), mix TVD %.3f, size TVD read %s write %s, gap KS %.3f"
              % (k + 1, p["from_ns"] / 1e9, p["to_ns"] / 1e9, p["iops"]["a"], p["iops"]["b"],
                 p["iops"]["ratio_b_over_a"] or float("nan"), p["mix_tvd"],
                 "%.3f" % tv["read"] if tv.get("read") is not None else "-",
                 "%.3f" % tv["write"] if tv.get("write") is not None else "-", p["interarrival_ks"]))
        if kind == "phases":
            r = p["iops"]["ratio_b_over_a"]
            ok = ok and r is not None and abs(r - 1) <= 0.2
            ok = ok and p["mix_tvd"] <= 0.05
            ok = ok and all(v is None or v <= 0.05 or
                            (dr == "read" and reads.get(k + 1, MIN_READS) < MIN_READS)
                            for dr, v in tv.items())
# the phase that holds the CHECKPOINT's start: a checkpoint under 1 s (the shortest phase) is
# a phase of its own only with the I/O around it
for k, p in enumerate(f["phases"]["phases"]):
    if p["from_ns"] <= ck < p["to_ns"]:
        print("CHECKPOINT (%.2f s) in phase %d (%.2f..%.2f s): IOPS B/A %.3f phased, %.3f flat"
              % ((ck_end - ck) / 1e9, k + 1, p["from_ns"] / 1e9, p["to_ns"] / 1e9,
                 p["iops"]["ratio_b_over_a"] or float("nan"),
                 f["flat"]["phases"][k]["iops"]["ratio_b_over_a"] or float("nan")))
print("targets (checkpoint boundary within 2 windows; per phase IOPS within 20%%, mix and size TVD <= 0.05; "
      "read sizes where the phase has >= %d reads):" % MIN_READS,
      "met" if ok else "missed")
sys.exit(0 if ok else 1)
PY
