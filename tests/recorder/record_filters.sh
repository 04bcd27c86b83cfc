#!/bin/bash
# --cgroup, --comm, --max-events, --max-size: only matching I/O, and limits stop the recording.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
. "${BIOTAPE_SRC:?}/tests/recorder/rec_lib.sh" || exit 1
rec_require python3
D=$(t_tmpdir) || exit 1
t_loop 32
CG=
cleanup_cg() { [ -n "$CG" ] && rmdir "$CG" 2>/dev/null; t_cleanup; }
trap cleanup_cg EXIT

# --cgroup: dd inside a fresh cgroup v2 is recorded, the same dd outside is not.
CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
[ -n "$CG2" ] || skip "no cgroup v2 mounted"
CG=$(mktemp -d "$CG2/biotape-test.XXXXXX") || skip "cannot create a cgroup"
rec_start "$D/cg.btape" -d "$LOOP" --cgroup "$CG"
sh -c "echo \$\$ > '$CG/cgroup.procs' && exec dd if='$LOOP' of=/dev/null bs=4k count=100 iflag=direct status=none"
dd if="$LOOP" of=/dev/null bs=4k count=50 iflag=direct status=none
rec_stop INT
"$BIOTAPE" dump --csv "$D/cg.btape" > "$D/cg.csv"
python3 "$BIOTAPE_SRC/tests/recorder/check_trace.py" "$D/cg.csv" --summary "$REC_ERR" --comm dd --expect read=100 ||
	fail "--cgroup: expected exactly the 100 reads from inside the cgroup"
[ "$(tail -n +2 "$D/cg.csv" | wc -l)" = 100 ] || fail "--cgroup: I/O from outside recorded"

# --comm: only processes with that name.
rec_start "$D/comm.btape" -d "$LOOP" --comm dd
dd if="$LOOP" of=/dev/null bs=8k count=30 iflag=direct status=none
fio --name=other --filename="$LOOP" --rw=randread --bs=4k --direct=1 --number_ios=40 \
	--size=32M --output-format=terse >/dev/null
rec_stop INT
"$BIOTAPE" dump --csv "$D/comm.btape" > "$D/comm.csv"
python3 "$BIOTAPE_SRC/tests/recorder/check_trace.py" "$D/comm.csv" --summary "$REC_ERR" --comm dd --expect read=30 \
	--sizes 8192 || fail "--comm dd"
[ "$(tail -n +2 "$D/comm.csv" | wc -l)" = 30 ] || fail "--comm: other processes recorded"

# --max-events N: exactly N events, then the recorder stops by itself.
rc=0
"$BIOTAPE" record -o "$D/max.btape" -d "$LOOP" --max-events 123 -- \
	fio --name=many --filename="$LOOP" --rw=randread --bs=4k --direct=1 --number_ios=2000 \
	--size=32M --output-format=terse >/dev/null 2>"$D/max.err" || rc=$?
[ "$rc" = 0 ] || { cat "$D/max.err"; fail "--max-events: exit $rc"; }
n=$("$BIOTAPE" dump --csv "$D/max.btape" | tail -n +2 | wc -l)
[ "$n" = 123 ] || fail "--max-events 123 recorded $n"

# --max-size: stops once the trace reaches the size (chunks are flushed every second).
rc=0
timeout 60 "$BIOTAPE" record -o "$D/size.btape" -d "$LOOP" --max-size 20k -- \
	fio --name=long --filename="$LOOP" --rw=randread --bs=4k --direct=1 --time_based \
	--runtime=30 --size=32M --output-format=terse >/dev/null 2>"$D/size.err" || rc=$?
[ "$rc" = 0 ] || { cat "$D/size.err"; fail "--max-size: exit $rc"; }
sz=$(stat -c %s "$D/size.btape")
[ "$sz" -ge 20480 ] && [ "$sz" -lt 2000000 ] || fail "--max-size 20k: file is $sz bytes"
pass "record_filters"
