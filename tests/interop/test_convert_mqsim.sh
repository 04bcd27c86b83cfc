#!/usr/bin/env bash
# The shared MQSim traces: event count, ops, bytes and device ids of the imported .btape must
# equal what awk computes from the input itself; the device table has one entry per id.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
D=$(t_tmpdir) || exit 1
DATA=$BIOTAPE_SRC/tests/interop/data

for t in mqsim_tpcc-small mqsim_wsrch-small; do
	in=$DATA/$t.trace
	"$BIOTAPE" convert "$in" "$D/$t.btape" >"$D/out" 2>"$D/err" ||
		fail "$t: convert failed: $(cat "$D/err")"
	grep -q "(mqsim)" "$D/out" || fail "$t: not detected as mqsim: $(cat "$D/out")"
	"$BIOTAPE" convert -q "$D/$t.btape" "$D/$t.csv" || fail "$t: csv export failed"

	# expectations from the input: count, reads, writes, bytes per op, devices, time sum
	exp=$(awk '{ n++; if ($5 == 1) { r++; rb += $4 * 512 } else { w++; wb += $4 * 512 }
		     dev[$2] = 1; s += $3 }
		   END { nd = 0; for (d in dev) nd++; printf "%d %d %d %d %d %d %d\n", n, r, w, rb, wb, nd, s }' "$in")
	# the same from the export (issue_ns,...,dev,sector,bytes,op,...): devices via the table
	got=$(awk -F, 'NR > 1 { n++; if ($7 == "read") { r++; rb += $6 } else if ($7 == "write") { w++; wb += $6 }
		     dev[$4] = 1; s += $5 }
		   END { nd = 0; for (d in dev) nd++; printf "%d %d %d %d %d %d %d\n", n, r, w, rb, wb, nd, s }' "$D/$t.csv")
	[ "$exp" = "$got" ] || fail "$t: expected '$exp' (n reads writes rbytes wbytes devices sectorsum), got '$got'"

	# every line maps to one record with the same time, sector and size (times sorted stably)
	awk '{ printf "%s %s %s %s\n", $1, $3, $4 * 512, ($5 == 1 ? "read" : "write") }' "$in" | sort >"$D/exp.lines"
	awk -F, 'NR > 1 { printf "%s %s %s %s\n", $1, $5, $6, $7 }' "$D/$t.csv" | sort >"$D/got.lines"
	cmp -s "$D/exp.lines" "$D/got.lines" || fail "$t: records differ from input lines: $(diff "$D/exp.lines" "$D/got.lines" | head -5)"

	# issue order in the file
	awk -F, 'NR > 2 && $1 < prev { bad = 1 } NR > 1 { prev = $1 } END { exit bad }' "$D/$t.csv" ||
		fail "$t: events not in issue order"

	# device names are the source ids: the table has exactly the ids of the input
	"$BIOTAPE" info "$D/$t.btape" >"$D/info" 2>&1 || fail "$t: info failed"
	ndev_in=$(awk '{ print $2 }' "$in" | sort -u | wc -l)
	ndev_tab=$(awk '/^devices:/ { on = 1; next } on && /^ *[0-9]+ / { n++ } on && /^$/ { on = 0 } END { print n + 0 }' "$D/info")
	[ "$ndev_in" = "$ndev_tab" ] || fail "$t: $ndev_in device ids in input, $ndev_tab in the table"
done

# checked facts from shared/data/README.md, as a cross-check of the awk above
n=$(awk -F, 'NR > 1 && $7 == "read"' "$D/mqsim_wsrch-small.csv" | wc -l)
[ "$n" = 24779 ] || fail "wsrch-small: $n reads, README says 24779"
n=$(awk -F, 'NR > 1 && $7 == "write"' "$D/mqsim_tpcc-small.csv" | wc -l)
[ "$n" = 2618 ] || fail "tpcc-small: $n writes, README says 2618"
pass "MQSim traces import with the counts, ops, bytes and devices of the input"
