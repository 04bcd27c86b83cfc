#!/usr/bin/env bash
# bench/replay/deps.sh: which --order mode reproduces the application's own run on other
# storage (issue #21; method and figures in docs/BENCHMARKS.md, conclusions in docs/REPLAY.md
# "Dependencies").
#
# A "storage" is an IOPS-capped device: loop device L1 over a /dev/shm file, its reads and
# writes capped by the cgroup v1 blkio throttle of the ROOT cgroup (so that everything that
# reaches it is held: the application, ext4's jbd2 and writeback, the replayer), and loop
# device L2 over L1 (direct I/O), the device the workload uses and that is recorded. The
# throttle holds bios before the block layer sees them, so at L1 its wait would be invisible;
# at L2 it is device time, as a slow array's queue is.
#
# Each round, for each workload:
#   1. run it on FAST storage (FAST_IOPS) and on SLOW storage (SLOW_IOPS), each recorded with
#      `biotape record` on a fresh device: the application's own runs;
#   2. direction "slower": replay the FAST recording onto fresh SLOW storage in each mode,
#      recorded, and compare each to the SLOW run (the truth); direction "faster": the SLOW
#      recording onto FAST storage against the FAST run;
#   3. "recording" is the source recording itself against the truth: what assuming the new
#      storage behaves like the old predicts; "app again" is the application's run of the
#      round before against this round's (from round 2): the noise floor.
# Workloads (fixed amounts of work, not time-bound):
#   fio     the issue's job, on the raw device, O_DIRECT: a WAL-like stream (sequential 8 KiB
#           writes, each followed by fdatasync, iodepth 1) beside a random 8 KiB read/write
#           stream (libaio, iodepth 4);
#   sqlite  a real database: sqlite3 (WAL journal, synchronous=FULL) on ext4, SQL_TX
#           transactions each reading two random rows and updating a third of a 100k-row
#           table, page cache cold (the file system is mounted afresh before the run, without
#           ext4's background block-bitmap prefetch).
# Modes: none conflict barrier causal (--order), load and afap (--timing); causal:RULE is
# causal with --cross-thread RULE (off, barrier, any, wake). The applications are recorded
# with REC_ARGS (--waits), so causal alone is causal:wake (docs/REPLAY.md). A mode may carry
# replay options after commas, as its own row: "causal causal,--spin-us,0" is an A/B of the
# option in the same rounds; MODE@base replays with BASE=PATH's biotape (two builds A/B).
# Per mode and direction, medians over the rounds of replay / truth: run time at the device
# (first issue to last completion), IOPS, device time p50/p99 per op, mean queue depth, and
# `biotape compare TRUTH REPLAY`'s fidelity (per-window IOPS correlation, inter-arrival KS,
# latency demerit).
#   bash bench/replay/deps.sh [BUILD_DIR]
# Environment: ROUNDS (3), FAST_IOPS (5000), SLOW_IOPS (1000), WORKLOADS ("fio sqlite"),
# MODES ("none conflict barrier causal load afap"), REC_ARGS (--waits: the applications'
# recordings; empty: without wakes), FIO_WAL (1000 WAL writes), FIO_RAND (3000
# random I/Os), SQL_TX (800), SQL_ROWS (100000), BIOTAPE=PATH (measure that binary),
# KEEP=DIR (copy the recordings, the replays' and per-run rows there). Needs root, cgroup v1 blkio, fio,
# sqlite3, mkfs.ext4, python3. Writes only to its own loop devices over /dev/shm (one 256 MiB
# file, two devices stacked, at a time), clears the throttle rules it set, and detaches them.
set -euo pipefail
BUILD=${1:-build}
ROUNDS=${ROUNDS:-3}
FAST_IOPS=${FAST_IOPS:-5000}
SLOW_IOPS=${SLOW_IOPS:-1000}
WORKLOADS=${WORKLOADS:-fio sqlite}
MODES=${MODES:-none conflict barrier causal load afap}
FIO_WAL=${FIO_WAL:-1000}
FIO_RAND=${FIO_RAND:-3000}
SQL_TX=${SQL_TX:-800}
SQL_ROWS=${SQL_ROWS:-100000}
read -r -a REC_ARGS <<<"${REC_ARGS---waits}"
BIN=$(cd "$BUILD/bin" && pwd)
BT=${BIOTAPE:-$BIN/biotape}
HERE=$(cd "$(dirname "$0")" && pwd)
SIZE_MB=256
BLKIO=/sys/fs/cgroup/blkio
die() { echo "deps.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (loop devices, eBPF, the blkio throttle)"
for t in fio sqlite3 mkfs.ext4 python3 lsblk; do
	command -v "$t" >/dev/null || die "needs $t"
done
[ -w "$BLKIO/blkio.throttle.write_iops_device" ] || die "needs cgroup v1 blkio at $BLKIO"
"$BT" record --help >/dev/null 2>&1 || die "$BT has no record command (built without BPF?)"
. "$HERE/../../tests/loop.sh"
W=$(mktemp -d /dev/shm/biotape-deps.XXXXXX)
MNT=$W/mnt
mkdir -p "$MNT"
THROTTLED=() # MAJ:MIN of every device this script capped
unthrottle() {
	local mm
	for mm in "${THROTTLED[@]}"; do
		echo "$mm 0" >"$BLKIO/blkio.throttle.read_iops_device" 2>/dev/null || true
		echo "$mm 0" >"$BLKIO/blkio.throttle.write_iops_device" 2>/dev/null || true
	done
	THROTTLED=()
}
storage_free() {
	mountpoint -q "$MNT" && umount "$MNT"
	unthrottle
	loop_detach_all
}
cleanup() {
	storage_free
	rm -rf "$W"
}
trap cleanup EXIT
trap "exit 130" INT TERM
load() { cut -d' ' -f1-3 /proc/loadavg; }

# storage_new: fresh L1 and L2 (L2 over L1), uncapped yet; sets DEV (L2) and DEV_MM (L1's)
storage_new() {
	local l2
	loop_new "$SIZE_MB" "$W" || die "cannot create a loop device"
	DEV_MM=$(lsblk -dno MAJ:MIN "$LOOP" | tr -d ' ')
	l2=$(losetup -f --show --direct-io=on "$LOOP") || die "cannot stack a loop device on $LOOP"
	loop_adopt "$l2"
	DEV=$l2
}
# storage_cap IOPS: cap the reads and the writes of the current storage
storage_cap() {
	THROTTLED+=("$DEV_MM")
	echo "$DEV_MM $1" >"$BLKIO/blkio.throttle.read_iops_device"
	echo "$DEV_MM $1" >"$BLKIO/blkio.throttle.write_iops_device"
}

# the sqlite workload's database (made once, copied onto each storage) and its transactions
# (one SQL file: every run does the same work)
if [[ " $WORKLOADS " == *" sqlite "* ]]; then
	python3 - "$W/db" "$W/tx.sql" "$SQL_ROWS" "$SQL_TX" <<'PY'
import random, sqlite3, sys
db, tx, rows, ntx = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
c = sqlite3.connect(db)
c.execute("PRAGMA journal_mode=WAL")
c.execute("CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB)")
rnd = random.Random(7)
c.executemany("INSERT INTO t VALUES(?, ?)", ((k, rnd.randbytes(200)) for k in range(rows)))
c.commit()
c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
c.close()
with open(tx, "w") as f:
    f.write("PRAGMA journal_mode=WAL;\nPRAGMA synchronous=FULL;\n")
    for _ in range(ntx):
        a, b, u = (rnd.randrange(rows) for _ in range(3))
        f.write(f"BEGIN; SELECT length(v) FROM t WHERE k={a}; SELECT length(v) FROM t WHERE "
                f"k={b}; UPDATE t SET v=randomblob(200) WHERE k={u}; COMMIT;\n")
PY
fi

# run_app WORKLOAD IOPS OUT: the workload on fresh storage capped at IOPS, recorded into OUT
run_app() {
	local wl=$1 iops=$2 out=$3
	storage_new
	case $wl in
	fio)
		storage_cap "$iops"
		"$BT" record -o "$out" -d "$DEV" "${REC_ARGS[@]}" -- fio --name=wal --filename="$DEV" --rw=write \
			--bs=8k --direct=1 --ioengine=psync --iodepth=1 --fdatasync=1 --offset=0 \
			--size=$((FIO_WAL * 8))k --name=rnd --filename="$DEV" --rw=randrw --bs=8k \
			--direct=1 --ioengine=libaio --iodepth=4 --offset=64M --size=128M \
			--number_ios="$FIO_RAND" --randseed=7 --output="$W/fio.txt" \
			>"$W/app.log" 2>&1 || die "fio on $iops IOPS failed: $(tail -2 "$W/app.log")"
		;;
	sqlite)
		mkfs.ext4 -q -F -E nodiscard,lazy_itable_init=0,lazy_journal_init=0 "$DEV"
		mount "$DEV" "$MNT"
		cp "$W/db" "$MNT/db"
		umount "$MNT" # the page cache starts cold
		# no_prefetch_block_bitmaps: ext4lazyinit's bitmap reads after the mount are not
		# the application's; a replay keeps them at their recorded times, seconds after the
		# application's last I/O on faster storage, where its own run has stopped
		mount -o no_prefetch_block_bitmaps "$DEV" "$MNT"
		storage_cap "$iops"
		"$BT" record -o "$out" -d "$DEV" "${REC_ARGS[@]}" -- sqlite3 "$MNT/db" <"$W/tx.sql" \
			>"$W/app.log" 2>&1 || die "sqlite3 on $iops IOPS failed: $(tail -2 "$W/app.log")"
		umount "$MNT"
		;;
	*) die "unknown workload $wl" ;;
	esac
	# record before c85a15d exits 0 whatever the command did (BIOTAPE= may be one): its log says
	grep -q "command exited with status 0" "$W/app.log" ||
		die "$wl on $iops IOPS failed: $(grep -v '^biotape: \(recorded\|lost\)' "$W/app.log" | tail -2)"
	grep -q "lost 0 events" "$W/app.log" || echo "  ($wl: the recording lost events)"
	storage_free
}

# replay SRC IOPS MODE OUT: SRC replayed onto fresh storage capped at IOPS, recorded into OUT;
# the replayer's JSON in OUT.json
replay() {
	local src=$1 iops=$2 mode=${3%%,*} out=$4 how extra=() bt=$BT
	# MODE@base: replayed by BASE's binary (an A/B of two builds in the same rounds)
	[[ $mode != *@base ]] || { bt=${BASE:?MODE@base needs BASE=PATH}; mode=${mode%@base}; }
	# MODE,OPT,...: replay options added to the mode's (an A/B of one option in the same rounds)
	[[ $3 != *,* ]] || IFS=, read -r -a extra <<<"${3#*,}"
	case $mode in
	load | afap) how=(--timing "$mode") ;;
	causal:*) how=(--order causal --cross-thread "${mode#causal:}") ;;
	*) how=(--order "$mode") ;;
	esac
	storage_new
	storage_cap "$iops"
	"$BT" record -o "$out" -d "$DEV" -- "$bt" replay "$src" --target "$DEV" --write --json \
		--no-progress "${how[@]}" "${extra[@]}" >"$out.json" 2>"$W/rep.log" ||
		die "the $3 replay failed: $(grep -v '^biotape: \(recorded\|lost\|command exited\)' "$W/rep.log" | tail -2)"
	grep -q "command exited with status 0" "$W/rep.log" ||
		die "the $mode replay failed: $(grep -v '^biotape: \(recorded\|lost\)' "$W/rep.log" | tail -2)"
	grep -q "lost 0 events" "$W/rep.log" || echo "  ($mode: the recording lost events)"
	storage_free
}

# row WL DIR ROUND MODE TRUTH RUN: one row of replay / truth into rows.jsonl
row() {
	"$BT" analyze --json "$5" >"$W/truth.json"
	"$BT" analyze --json "$6" >"$W/run.json"
	"$BT" compare --json "$5" "$6" >"$W/cmp.json"
	python3 - "$@" "$W/truth.json" "$W/run.json" "$W/cmp.json" "$(load)" "$W/rows.jsonl" <<'PY'
import json, os, sys
wl, d, rnd, mode, _, run, tj, rj, cj, load, rows = sys.argv[1:12]
t, r, c = (json.load(open(x)) for x in (tj, rj, cj))
def stats(j):
    s = {"secs": j["window"]["duration_s"], "ios": j["overall"]["count"],
         "qd": j["queue_depth"]["depth"]["mean_ios"]}
    s["iops"] = s["ios"] / s["secs"]
    for op in ("read", "write", "flush"):
        lat = j["ops"].get(op, {}).get("latency", {}).get("device", {})
        if lat.get("count"):
            s[op + "_p50"], s[op + "_p99"] = lat["p50_ns"], lat["p99_ns"]
    return s
a, b = stats(t), stats(r)
f = c["fidelity"]
row = {"wl": wl, "dir": d, "round": int(rnd), "mode": mode, "load": load,
       "corr": f["iops_window_correlation"], "ks": f["interarrival_ks"],
       "demerit_ms": {k: v / 1e6 for k, v in f["latency_demerit_ns"].items() if v is not None}}
for k in b:
    if k in a and a[k]:
        row[k] = b[k] / a[k]
if os.path.exists(run + ".json"):
    dw = json.load(open(run + ".json")).get("dep_waits", {})
    row["held"] = {k: v["ios"] for k, v in dw.items() if isinstance(v, dict) and "ios" in v}
open(rows, "a").write(json.dumps(row) + "\n")
print(f"  {wl:6s} {d:6s} {mode:9s} time {row['secs']:5.2f}x  IOPS {row['iops']:5.2f}x  "
      + "  ".join(f"{op} p50 {row[op + '_p50']:5.2f}x p99 {row[op + '_p99']:5.2f}x"
                  for op in ("read", "write", "flush") if op + "_p99" in row)
      + f"  QD {row.get('qd', 0):4.2f}x  corr {row['corr'] if row['corr'] is None else round(row['corr'], 2)}"
      + f"  KS {row['ks']:.2f}  held {row.get('held', '-')}  (load {load})")
PY
}

echo "# bench/replay/deps on $(uname -r), $(nproc) CPUs, $(fio --version), sqlite $(sqlite3 -version |
	cut -d' ' -f1), biotape $("$BT" --version | awk '{print $2}'); rounds $ROUNDS, fast $FAST_IOPS" \
	"IOPS, slow $SLOW_IOPS IOPS; load average $(load)"
read -r -a modes <<<"$MODES"
for r in $(seq "$ROUNDS"); do
	echo "round $r"
	for wl in $WORKLOADS; do
		run_app "$wl" "$FAST_IOPS" "$W/$wl-fast.btape"
		run_app "$wl" "$SLOW_IOPS" "$W/$wl-slow.btape"
		for d in slower faster; do
			if [ $d = slower ]; then
				src=$W/$wl-fast.btape truth=$W/$wl-slow.btape iops=$SLOW_IOPS
			else
				src=$W/$wl-slow.btape truth=$W/$wl-fast.btape iops=$FAST_IOPS
			fi
			row "$wl" $d "$r" recording "$truth" "$src"
			# the noise floor: the application's run of the round before against this one
			[ -e "$truth.prev" ] && row "$wl" $d "$r" "app again" "$truth" "$truth.prev"
			# the modes in a rotated order each round: drift in the machine's load
			# falls on each of them in turn
			for i in "${!modes[@]}"; do
				m=${modes[$(((i + r - 1) % ${#modes[@]}))]}
				replay "$src" "$iops" "$m" "$W/rep.btape"
				row "$wl" $d "$r" "$m" "$truth" "$W/rep.btape"
				[ -z "${KEEP:-}" ] || { mkdir -p "$KEEP" &&
					cp "$W/rep.btape" "$KEEP/$wl-$d-${m//[:,]/-}-$r.btape" &&
					cp "$W/rep.btape.json" "$KEEP/$wl-$d-${m//[:,]/-}-$r.json"; }
			done
		done
		cp "$W/$wl-fast.btape" "$W/$wl-fast.btape.prev"
		cp "$W/$wl-slow.btape" "$W/$wl-slow.btape.prev"
		if [ -n "${KEEP:-}" ]; then
			mkdir -p "$KEEP"
			cp "$W/$wl-fast.btape" "$KEEP/$wl-fast-$r.btape"
			cp "$W/$wl-slow.btape" "$KEEP/$wl-slow-$r.btape"
		fi
	done
done
[ -n "${KEEP:-}" ] && cp "$W/rows.jsonl" "$KEEP/"

python3 - "$W/rows.jsonl" "$MODES" <<'PY'
import json, math, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
modes = ["app again", "recording"] + sys.argv[2].split()
def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None
def fmt(v, w=5):
    return f"{v:{w}.2f}" if v is not None else " " * (w - 1) + "-"
print("SUMMARY: replay / truth, medians over the rounds (1.00 is the truth; within 15% is"
      " 0.85-1.15)")
cols = ["secs", "iops", "read_p50", "read_p99", "write_p50", "write_p99", "flush_p99", "qd"]
for wl in dict.fromkeys(r["wl"] for r in rows):
    for d in ("slower", "faster"):
        print(f" {wl}, replayed on {d} storage than it was recorded on")
        print(f"  {'mode':10s} " + " ".join(f"{c:>9s}" for c in cols)
              + "      corr   KS  demerit ms (r/w)  worst |err| IOPS,p99")
        for m in modes:
            rs = [r for r in rows if r["wl"] == wl and r["dir"] == d and r["mode"] == m]
            if not rs:
                continue
            v = {c: med(r.get(c) for r in rs) for c in cols}
            corr, ks = med(r["corr"] for r in rs), med(r["ks"] for r in rs)
            dm = [med(r["demerit_ms"].get(op) for r in rs) for op in ("read", "write")]
            # the issue's target: IOPS and p99 (of each op present) within 15% of the truth
            errs = [abs(v[c] - 1) for c in ("iops", "read_p99", "write_p99") if v[c] is not None]
            worst = max(errs) if errs else None
            print(f"  {m:10s} " + " ".join(f"{fmt(v[c], 9)}" for c in cols)
                  + f"  {fmt(corr, 8)} {fmt(ks)} {fmt(dm[0], 8)} {fmt(dm[1], 8)}"
                  + f"  {100 * worst:8.0f}%" + ("  within 15%" if worst <= 0.15 else ""))
PY
echo "# load average at the end $(load)"
