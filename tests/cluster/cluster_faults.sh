#!/usr/bin/env bash
# Cluster replay's faults, mpirun -n 3 on this host:
#  - one rank's target carries an ext4 signature (no --force): no rank issues any I/O (the
#    recorder sees no write on any of the three devices) and one line names that rank;
#  - one rank's target fails mid-run (its file is truncated: its reads come back short): the
#    others stop within about a second, non-zero exit naming the rank, results written; before
#    that, every rank's threads are in the normal class (the start's real-time has ended);
#  - kill -9 of one rank mid-run: the run ends within a few seconds, non-zero exit, the other
#    ranks' result traces written and readable, rank 0's report of the survivors marked
#    interrupted with the killed rank's row marked gone and a line naming it;
#  - kill -9 of rank 0 mid-run: the survivors still report, each its own results marked
#    interrupted (one whole report each on stdout, headed by its rank and host), with a line
#    naming rank 0, and write their result traces;
#  - rank 1 hangs mid-run (SIGSTOP: the launcher sees nothing wrong): rank 0 names it gone,
#    reports, and is the rank that ends the job (MPI_Abort): rank 2, which sent its results,
#    leaves that to rank 0 instead of aborting it mid-report;
#  - rank 1 stalls 1.4 s (SIGSTOP, SIGCONT): rank 0 judges it gone, which stops the run, then
#    merges its results when its late beat comes; nobody aborts the job;
#  - rank 0 only slow (a test hook withholds its last verdict from rank 2): rank 2 gives it up,
#    reports its own, then hands its results to rank 0, which merges them and ends the job;
#  - SIGINT on mpirun: every rank stops, the merged report is marked interrupted, non-zero exit;
#  - kill -9 of mpirun itself: its ranks end, and the shared-memory files Open MPI then leaves
#    behind (vader_segment.*, 4 MiB a rank) are in the test's own directory, removed at exit
#    (tests/cluster/mpi.sh), not in /dev/shm.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
. "${BIOTAPE_SRC:?}/tests/cluster/mpi.sh" || exit 1
require_root losetup mkfs.ext4 python3
mpi_require
GEN=${BIOTAPE_BIN_DIR:-$(dirname "$BIOTAPE")}/gen_trace
[ -x "$GEN" ] || skip "no trace generator at $GEN"
"$BIOTAPE" record --help >/dev/null 2>&1 || skip "biotape record is not available"
D=$(t_tmpdir) || exit 1
now() { date +%s%N; }

# bg_mpirun OUT ERR ARGS...: mpirun ARGS in the background (MP = its pid, MP_ERR = ERR)
bg_mpirun() {
	local out=$1 err=$2
	MP_ERR=$err
	shift 2
	"${MPIRUN[@]}" "$@" >"$out" 2>"$err" &
	MP=$!
	T_PIDS+=("$MP")
}
# wait_mp LIMIT_S: waits for mpirun at most LIMIT_S seconds (kill -9 after); sets RC, WAITED_MS
wait_mp() {
	local t0 i p
	t0=$(now)
	for ((i = 0; i < $1 * 20; i++)); do
		kill -0 "$MP" 2>/dev/null || break
		sleep 0.05
	done
	if kill -0 "$MP" 2>/dev/null; then
		# its ranks too, by pid: one may be stopped (3c) and would outlive mpirun
		for p in $(pgrep -P "$MP"); do kill -9 "$p"; done
		kill -9 "$MP"
		fail "mpirun still running after $1 s: $(tail -20 "$MP_ERR")"
	fi
	RC=0
	wait "$MP" || RC=$?
	WAITED_MS=$((($(now) - t0) / 1000000))
}
# mid_run: returns half a second into the run: once every rank is inside its step (its
# heartbeat thread, "bt-heartbeat", runs). A fixed sleep from the launch is not enough: under
# ASan on 2 vCPUs the ranks' start-up alone can take longer.
mid_run() {
	local i p n
	for ((i = 0; i < 1200; i++)); do
		n=0
		for p in $(pgrep -P "$MP"); do
			grep -qsx bt-heartbeat /proc/"$p"/task/*/comm && n=$((n + 1))
		done
		[ $n = 3 ] && { sleep 0.5; return 0; }
		sleep 0.05
	done
	fail "the ranks did not begin their step within 60 s"
}
# normal_class: no thread of any rank is real-time mid-run: the issuing thread's real-time for
# the start (SCHED_FIFO until 200 us after the instant) has ended, and no thread made meanwhile
# (io_uring's io-wq worker) inherited it (TS normal, B batch: the trace decoder)
normal_class() {
	local p rt
	for p in $(pgrep -P "$MP"); do
		rt=$(ps -L -o cls=,comm= -p "$p" | awk '$1 != "TS" && $1 != "B"')
		[ -z "$rt" ] || fail "rank pid $p has real-time threads mid-run: $rt"
	done
}
# rank_pid R: the pid of rank R, a child of mpirun
rank_pid() {
	local p
	for p in $(pgrep -P "$MP"); do
		tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1" &&
			{ echo "$p"; return 0; }
	done
	return 1
}

# 1. a signature on one rank's target: nobody writes, one line names the rank
"$GEN" -o "$D/w.btape" -n 2000 -r 20000 -p randwrite -S $((16 << 20)) || fail "gen"
for r in 0 1 2; do
	t_loop 32
	ln -s "$LOOP" "$D/dev$r"
	L[$r]=$LOOP
done
mkfs.ext4 -q -F "${L[1]}" || fail "mkfs.ext4"
# (the recorder's own exit status is its own: mpirun's goes to a file)
timeout 120 "$BIOTAPE" record --layer bio -o "$D/rec.btape" -d "${L[0]}" -d "${L[1]}" -d "${L[2]}" -- \
	bash -c '"$@"; echo $? >"'"$D/sig.rc"'"' mpirun "${MPIRUN[@]}" -n 3 "$BIOTAPE" replay "$D/w.btape" \
	--target "$D/dev%r" --write --no-progress >"$D/sig.out" 2>"$D/sig.err" || fail "record"
[ "$(cat "$D/sig.rc")" != 0 ] || fail "a target with a signature was accepted"
grep '^biotape: replay' "$D/sig.err" >"$D/sig.lines"
[ "$(wc -l <"$D/sig.lines")" = 1 ] || fail "want one line, got: $(cat "$D/sig.err")"
grep -q "^biotape: replay: host $(hostname) rank 1: .*$D/dev1.*signature" "$D/sig.lines" ||
	fail "the line does not name rank 1 and its target: $(cat "$D/sig.lines")"
writes=$("$BIOTAPE" dump --csv "$D/rec.btape" | awk -F, 'NR > 1 && $7 != "read"' | wc -l)
[ "$writes" = 0 ] || fail "$writes I/Os other than probe reads reached the devices"
echo "signature: refused before any write: $(cat "$D/sig.lines")"

# 2-4 on file targets, a 6 s trace
"$GEN" -o "$D/long.btape" -n 60000 -r 10000 -p randread -S $((16 << 20)) || fail "gen long"
for r in 0 1 2; do truncate -s 16M "$D/f$r" || fail "truncate"; done
run=(-n 3 "$BIOTAPE" replay "$D/long.btape" --target "$D/f%r" --no-progress -o "$D/res-%r.btape")

# 2. rank 1's target fails mid-run
bg_mpirun "$D/fail.out" "$D/fail.err" "${run[@]}"
mid_run
normal_class
truncate -s 0 "$D/f1"
wait_mp 30
[ $RC != 0 ] || fail "a failed target ended with exit 0"
[ $WAITED_MS -lt 3000 ] || fail "the ranks went on for $WAITED_MS ms after rank 1's target failed"
grep -q "^biotape: replay: rank 1 (host .*): .*I/Os failed" "$D/fail.err" ||
	fail "no line names rank 1's failure: $(cat "$D/fail.err")"
grep -q "(interrupted)" "$D/fail.out" || fail "the report is not marked interrupted"
# every rank's result trace says it was cut short (its footer)
for r in 0 1 2; do
	"$BIOTAPE" info "$D/res-$r.btape" >"$D/res.info" || fail "result $r unreadable"
	grep -q "^stopped: *early" "$D/res.info" || fail "result $r is not marked interrupted"
done
echo "target failure: all stopped $WAITED_MS ms after; $(grep 'rank 1 (' "$D/fail.err")"
truncate -s 16M "$D/f1"
rm -f "$D"/res-*

# kill_mid_run NAME RANK: the run with out/err in $D/NAME.*, RANK killed (-9) mid-run; it must
# end within 5 s, non-zero
kill_mid_run() {
	local pid
	bg_mpirun "$D/$1.out" "$D/$1.err" "${run[@]}"
	mid_run
	pid=$(rank_pid "$2") || fail "no rank $2 under mpirun $MP"
	kill -9 "$pid"
	wait_mp 30
	[ $RC != 0 ] || fail "a killed rank $2 ended with exit 0"
	[ $WAITED_MS -lt 5000 ] || fail "the run went on for $WAITED_MS ms after kill -9 of rank $2"
}

# 3. kill -9 of rank 1
kill_mid_run kill 1
for r in 0 2; do
	n=$("$BIOTAPE" info --json "$D/res-$r.btape" | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])') ||
		fail "rank $r's result trace is not readable"
	[ "$n" -gt 0 ] && [ "$n" -lt 60000 ] || fail "rank $r's result trace holds $n events"
done
grep -q "(interrupted)" "$D/kill.out" || fail "rank 0's report is not marked interrupted: $(cat "$D/kill.out")"
grep -q "^ *1 .* gone: no heartbeat" "$D/kill.out" || fail "no row marks rank 1 gone: $(cat "$D/kill.out")"
grep -q "^biotape: replay: rank 1 (host .*): gone" "$D/kill.err" ||
	fail "no line names rank 1: $(cat "$D/kill.err")"
echo "kill -9: ended $WAITED_MS ms after, exit $RC, ranks 0 and 2 wrote their results, rank 0 reported"
rm -f "$D"/res-*

# 3b. kill -9 of rank 0: nobody can merge; each survivor reports its own results
kill_mid_run kill0 0
for r in 1 2; do
	grep -q "^biotape: replay: rank 0 (host .*) is gone: no heartbeat from it; rank $r reports" "$D/kill0.err" ||
		fail "rank $r does not name rank 0: $(cat "$D/kill0.err")"
	grep -q "rank 0 (host .*) is gone: rank $r's (host .*) own results only" "$D/kill0.out" ||
		fail "no report from rank $r: $(cat "$D/kill0.out")"
	"$BIOTAPE" info "$D/res-$r.btape" >"$D/res.info" || fail "rank $r's result trace unreadable"
	grep -q "^stopped: *early" "$D/res.info" || fail "rank $r's result is not marked interrupted"
done
[ "$(grep -c "(interrupted)" "$D/kill0.out")" = 2 ] || fail "want two reports marked interrupted: $(cat "$D/kill0.out")"
# one whole report per survivor on mpirun's stdout, each headed by its rank and host
python3 - "$D/kill0.out" <<'PY' || fail "not one whole report per survivor, each headed by its rank: $(cat "$D/kill0.out")"
import re, sys
blocks, cur = [], None
for line in open(sys.argv[1]):
    m = re.match(r"^== rank (\d+) \(host .*\) of 3: rank 0 \(host .*\) is gone", line)
    if m:
        cur = {"rank": m.group(1), "text": ""}
        blocks.append(cur)
    elif cur is not None:
        cur["text"] += line
    elif line.strip():
        sys.exit(f"a line before any header: {line!r}")
assert sorted(b["rank"] for b in blocks) == ["1", "2"], [b["rank"] for b in blocks]
for b in blocks:
    assert b["text"].count("measured ") == 1, b
    assert re.search(rf"rank {b['rank']}'s \(host .*\) own results only", b["text"]), b
PY
echo "kill -9 of rank 0: ended $WAITED_MS ms after, exit $RC, ranks 1 and 2 reported their own"
rm -f "$D"/res-*

# 3c. rank 1 hangs: rank 0 reports it gone and ends the job itself (-v names who does)
bg_mpirun "$D/hang.out" "$D/hang.err" -n 3 "$BIOTAPE" -v "${run[@]:3}"
mid_run
pid=$(rank_pid 1) || fail "no rank 1 under mpirun $MP"
kill -STOP "$pid"
wait_mp 30
kill -9 "$pid" 2>/dev/null # (MPI_Abort's SIGCONT and SIGTERM have ended it)
[ $RC != 0 ] || fail "a hung rank 1 ended with exit 0"
[ $WAITED_MS -lt 5000 ] ||
	fail "the run went on for $WAITED_MS ms after rank 1 hung: $(cat "$D/hang.out" "$D/hang.err")"
grep -q "^ *1 .* gone: no heartbeat" "$D/hang.out" || fail "no row marks rank 1 gone: $(cat "$D/hang.out" "$D/hang.err")"
grep -Eq "^ *2 .* interrupted( |$)" "$D/hang.out" || fail "rank 2's results are not in the merge: $(cat "$D/hang.out")"
grep '^biotape: replay: rank [0-9]* (host .*) ends the job' "$D/hang.err" >"$D/hang.enders"
grep -q "rank 0 " "$D/hang.enders" || fail "rank 0 did not end the job: $(cat "$D/hang.err")"
grep -v -q "rank 0 " "$D/hang.enders" && fail "another rank ended the job: $(cat "$D/hang.enders")"
"$BIOTAPE" info "$D/res-2.btape" >"$D/res.info" || fail "rank 2's result trace unreadable"
echo "rank 1 hung: ended $WAITED_MS ms after, exit $RC, rank 0 reported it gone and ended the job"
rm -f "$D"/res-*

# 3e. rank 1 stalls 1.4 s (SIGSTOP, then SIGCONT: a paused host): rank 0 judges it gone after
# 1 s of silence, which stops the run, then hears its late beat: its results are merged (its row
# is not marked gone), a line says so, and nobody aborts the job (before: rank 0 no longer
# listened to it, and its row said gone though it had replayed and was alive).
bg_mpirun "$D/stall.out" "$D/stall.err" -n 3 "$BIOTAPE" -v "${run[@]:3}"
mid_run
pid=$(rank_pid 1) || fail "no rank 1 under mpirun $MP"
kill -STOP "$pid"
sleep 1.4
kill -CONT "$pid"
wait_mp 30
[ $RC != 0 ] || fail "a run stopped by a stalled rank ended with exit 0"
[ $WAITED_MS -lt 5000 ] || fail "the run went on for $WAITED_MS ms after rank 1 resumed: $(cat "$D/stall.err")"
grep -q "^biotape: replay: rank 1 (host .*) answered again .* after it was judged gone, which stopped the run: its results are merged" "$D/stall.err" ||
	fail "no line says rank 1 answered again: $(cat "$D/stall.out" "$D/stall.err")"
grep -q " gone" "$D/stall.out" && fail "a row is marked gone: $(cat "$D/stall.out")"
for r in 0 1 2; do
	grep -Eq "^ *$r .* interrupted( |$)" "$D/stall.out" || fail "rank $r's row is not in the merge: $(cat "$D/stall.out")"
	n=$("$BIOTAPE" info --json "$D/res-$r.btape" | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])') ||
		fail "rank $r's result trace is not readable"
	[ "$n" -gt 0 ] && [ "$n" -lt 60000 ] || fail "rank $r's result trace holds $n events"
done
grep -q 'ends the job' "$D/stall.err" && fail "a rank aborted the job: $(cat "$D/stall.err")"
echo "rank 1 stalled 1.4 s: merged, ended $WAITED_MS ms after it resumed, exit $RC"
rm -f "$D"/res-*

# 3d. rank 0 only slow: rank 2 gives it up (test hook: rank 0 withholds its last verdict from
# rank 2) while rank 0 waits for its results. Rank 2 reports its own, then hands them to rank 0,
# which merges them and ends the job: not rank 2 after its 10 s wait for rank 0.
"$GEN" -o "$D/short.btape" -n 3000 -r 10000 -p randread -S $((16 << 20)) || fail "gen short"
t0=$(now)
"${MPIRUN[@]}" -x BIOTAPE_TEST_WITHHOLD_LAST_VERDICT=2 -n 3 "$BIOTAPE" -v replay "$D/short.btape" \
	--target "$D/f%r" --no-progress >"$D/slow.out" 2>"$D/slow.err" && fail "rank 2 gave rank 0 up, exit 0"
took=$((($(now) - t0) / 1000000))
[ $took -lt 8000 ] || fail "took $took ms: rank 0 did not end the job: $(cat "$D/slow.out" "$D/slow.err")"
grep -q "^biotape: replay: rank 0 (host .*) is gone: no heartbeat from it; rank 2 reports" "$D/slow.err" ||
	fail "rank 2 did not give rank 0 up: $(cat "$D/slow.err")"
grep -q "^== rank 2 (host .*) of 3: rank 0 (host .*) is gone" "$D/slow.out" ||
	fail "rank 2 did not report its own: $(cat "$D/slow.out")"
grep -q "^biotape: replay: rank 2 (host .*) handed its results to rank 0" "$D/slow.err" ||
	fail "rank 2 did not hand its results over: $(cat "$D/slow.err")"
grep -q "^ *2 .* interrupted (it lost rank 0's heartbeat and reported its own results)$" "$D/slow.out" ||
	fail "rank 0's report has no row of rank 2's handed results: $(cat "$D/slow.out")"
grep -q "^ *1 .* ok$" "$D/slow.out" || fail "rank 1's row is not ok: $(cat "$D/slow.out")"
grep '^biotape: replay: rank [0-9]* (host .*) ends the job' "$D/slow.err" >"$D/slow.enders"
[ "$(grep -c "rank 0 " "$D/slow.enders")" = 1 ] && [ "$(wc -l <"$D/slow.enders")" = 1 ] ||
	fail "rank 0 alone must end the job: $(cat "$D/slow.err")"
echo "rank 0 slow: rank 2 reported its own and handed it over; rank 0 merged it and ended the job in $took ms"

# 4. SIGINT on mpirun
bg_mpirun "$D/int.out" "$D/int.err" "${run[@]}"
mid_run
kill -INT "$MP"
wait_mp 30
[ $RC != 0 ] || fail "an interrupted run ended with exit 0"
[ $WAITED_MS -lt 5000 ] || fail "the run went on for $WAITED_MS ms after SIGINT"
grep -q "(interrupted)" "$D/int.out" || fail "the report is not marked interrupted: $(cat "$D/int.out")"
[ "$(grep -c ' interrupted$' "$D/int.out")" = 3 ] || fail "not every rank's row says interrupted"
for r in 0 1 2; do
	"$BIOTAPE" info "$D/res-$r.btape" >"$D/res.info" || fail "result $r unreadable"
	grep -q "^stopped: *early" "$D/res.info" || fail "result $r is not marked interrupted"
done
echo "SIGINT: ended $WAITED_MS ms after, exit $RC, report marked interrupted"

# 5. kill -9 of mpirun: nobody cleans up; Open MPI's files are in MPI_SHM only
rm -f "$MPI_SHM"/vader_segment.* # any an earlier case left: this case counts its own
bg_mpirun "$D/k9.out" "$D/k9.err" "${run[@]}"
mid_run
ranks=$(pgrep -P "$MP")
segs=$(cd "$MPI_SHM" && ls vader_segment.* 2>/dev/null)
[ "$(wc -w <<<"$segs")" = 3 ] || fail "want 3 vader_segment files in $MPI_SHM, found: $segs"
kill -9 "$MP"
wait "$MP" 2>/dev/null
for ((i = 0; i < 200; i++)); do # the ranks notice that their launcher is gone
	alive=
	for p in $ranks; do kill -0 "$p" 2>/dev/null && alive+=" $p"; done
	[ -z "$alive" ] && break
	sleep 0.05
done
for p in $alive; do kill -9 "$p"; done
[ -z "$alive" ] || fail "ranks$alive outlived mpirun by 10 s"
for f in $segs; do
	[ -e "$MPI_SHM/$f" ] || fail "$f is gone: the case no longer shows a leftover"
	[ ! -e "/dev/shm/$f" ] || fail "$f in /dev/shm"
done
echo "kill -9 of mpirun: its $(wc -w <<<"$segs") shared-memory files left in the test's directory only"
pass
