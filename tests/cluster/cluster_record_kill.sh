#!/usr/bin/env bash
# kill -9 of one rank of `mpirun -n 2 biotape record`: Open MPI then ends the job (SIGTERM to
# the other ranks, SIGKILL odls_base_sigkill_timeout seconds later; raised here so that the
# survivor outlives its 10 s tick timeout). The survivor notices that its peer stopped
# answering, says so in one line and finishes its trace marked "stopped early"; the killed
# rank's trace has no footer and is read up to its last complete frame. `info` says which is
# which, and `analyze` of the two names the host and rank of each.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
. "${BIOTAPE_SRC:?}/tests/cluster/mpi.sh" || exit 1
require_root losetup python3
mpi_require
"$BIOTAPE" record --help >/dev/null 2>&1 || skip "biotape record is not available"
[ -r /sys/kernel/btf/vmlinux ] || skip "kernel without BTF"
D=$(t_tmpdir) || exit 1
for r in 0 1; do
	t_loop 16
	ln -s "$LOOP" "$D/dev$r"
done
# each rank writes 2000 4 KiB blocks to its device, then waits (the run lasts up to 60 s)
timeout 120 "${MPIRUN[@]}" --mca odls_base_sigkill_timeout 20 -n 2 "$BIOTAPE" record \
	-o "$D/rec-%r.btape" -d "$D/dev%r" --duration 60 -- sh -c \
	"dd if=/dev/zero of=$D/dev\$BIOTAPE_RANK bs=4k count=2000 oflag=direct 2>/dev/null; sleep 60" \
	>"$D/out" 2>"$D/err" &
MP=$!
victim=
for _ in $(seq 100); do # rank 1's recorder, once both traces exist
	sleep 0.2
	[ -s "$D/rec-0.btape" ] && [ -s "$D/rec-1.btape" ] || continue
	for p in $(pgrep -f "$BIOTAPE record -o $D/rec-"); do
		# the recorder, not its COMMAND supervisor (a fork of it, named biotape-reaper)
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = biotape-reaper ] && continue
		tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=1" &&
			victim=$p
	done
	[ -n "$victim" ] && break
done
[ -n "$victim" ] || { kill "$MP"; wait "$MP"; fail "rank 1 never started: $(cat "$D/err")"; }
sleep 2 # its dd has written and the writer flushed (1 s)
kill -9 "$victim"
wait "$MP" && fail "mpirun exit 0 after a rank was killed"
grep -q "^biotape: record: rank 0 (host .*): a peer stopped answering" "$D/err" ||
	fail "the survivor did not say so: $(cat "$D/err")"
"$BIOTAPE" info "$D/rec-0.btape" >"$D/i0" || fail "info rank 0: $(cat "$D/err")"
"$BIOTAPE" info "$D/rec-1.btape" >"$D/i1" || fail "info rank 1 (killed): not readable"
grep -q "^stopped: *early" "$D/i0" || fail "rank 0's trace not marked stopped early: $(cat "$D/i0")"
grep -q "recovered: no footer" "$D/i0" && fail "rank 0's trace has no footer"
grep -q "recovered: no footer" "$D/i1" || fail "rank 1's trace has a footer: $(cat "$D/i1")"
grep -q "^events: *2000 " "$D/i1" || fail "rank 1's events lost: $(grep events "$D/i1")"
"$BIOTAPE" analyze "$D/rec-0.btape" "$D/rec-1.btape" >"$D/a.txt" || fail "analyze"
grep -q "WARNING: $D/rec-1.btape (host .*, rank 1) was cut short" "$D/a.txt" ||
	fail "analyze: $(sed -n 1,6p "$D/a.txt")"
grep -q "WARNING: $D/rec-0.btape (host .*, rank 0) stopped early" "$D/a.txt" ||
	fail "analyze: $(sed -n 1,6p "$D/a.txt")"
pass
