# Helpers for the recorder's integration tests. Source after tests/lib.sh.

# rec_require: root, fio, a kernel with BTF, and a biotape built with eBPF.
rec_require() {
	require_root fio "$@"
	[ -r /sys/kernel/btf/vmlinux ] || skip "kernel without BTF"
	if "$BIOTAPE" record -o /dev/null --max-events 1 -d 1:1 2>&1 | grep -q "without eBPF"; then
		skip "biotape built without eBPF support"
	fi
}

# rec_start OUT ARGS...: starts `biotape record -v -o OUT ARGS...` in the background and waits
# until its programs are attached. Sets REC_PID and REC_ERR (its stderr file).
rec_start() {
	local out=$1 i
	shift
	REC_ERR=$(mktemp /dev/shm/biotape-rec-err.XXXXXX)
	T_FILES+=("$REC_ERR")
	"$BIOTAPE" record -v -o "$out" "$@" 2>"$REC_ERR" &
	REC_PID=$!
	T_PIDS+=("$REC_PID")
	for i in $(seq 200); do
		grep -q "programs attached" "$REC_ERR" && return 0
		kill -0 "$REC_PID" 2>/dev/null || { cat "$REC_ERR" >&2; fail "recorder exited early"; }
		sleep 0.1
	done
	cat "$REC_ERR" >&2
	fail "recorder did not attach within 20 s"
}

# rec_stop [SIGNAL]: stops the recorder (default SIGINT) and checks that it exits 0.
rec_stop() {
	local rc=0
	kill -"${1:-INT}" "$REC_PID"
	wait "$REC_PID" || rc=$?
	cat "$REC_ERR" >&2
	[ "$rc" = 0 ] || fail "recorder exited $rc after SIG${1:-INT}"
}

# rec_lost: "ringbuf inflight writer" from the recorder's summary.
rec_lost() {
	sed -n 's/.*lost [0-9]* events (ring buffer full \([0-9]*\), in-flight map full \([0-9]*\), writer queue full \([0-9]*\)).*/\1 \2 \3/p' "$REC_ERR"
}

# fio_total JSON OP: total_ios of OP (read, write, trim, sync) summed over the jobs.
fio_total() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(sum(j[sys.argv[2]]["total_ios"] for j in d["jobs"]))' "$1" "$2"
}

# rec_noloop_merge: no merging on the loop device, so requests == what fio submitted.
rec_nomerge() {
	echo 2 > "/sys/block/$(basename "$LOOP")/queue/nomerges" || fail "nomerges"
}

# info_get FILE KEY[.KEY...]: a value from `biotape info --json FILE`.
info_get() {
	"$BIOTAPE" info --json "$1" | python3 -c '
import json, sys
v = json.load(sys.stdin)
for k in sys.argv[1].split("."):
    v = v[int(k)] if isinstance(v, list) else v[k]
print(str(v).lower() if isinstance(v, bool) else v)' "$2"
}
