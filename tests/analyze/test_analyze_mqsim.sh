#!/bin/bash
# biotape analyze on the MQSim traces (imported with biotape convert) against numbers computed
# here, independently, from the text files with awk: counts, bytes, per-device counts,
# sequential I/Os per stream, distinct 4 KiB blocks, skew, top sizes, duration, gaps.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
command -v python3 >/dev/null || skip "needs python3 (JSON checks)"
D=$(t_tmpdir) || exit 1
DATA=$BIOTAPE_SRC/tests/analyze/data

# jget FILE EXPR: a Python expression over the parsed JSON document d
jget() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
# near A B TOL: |A - B| <= TOL
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'; }
check() { # name got want
	[ "$2" = "$3" ] || fail "$T: $1: got '$2', want '$3'"
}

for T in wsrch tpcc; do
	SRC=$DATA/mqsim_$T-small.trace
	"$BIOTAPE" convert "$SRC" "$D/$T.btape" --from mqsim -q >/dev/null || fail "$T: convert"
	"$BIOTAPE" analyze "$D/$T.btape" --json >"$D/$T.json" || fail "$T: analyze --json"
	"$BIOTAPE" analyze "$D/$T.btape" >"$D/$T.txt" || fail "$T: analyze text"
	python3 -m json.tool "$D/$T.json" >/dev/null || fail "$T: JSON does not parse"

	# --- expectations from the text file (awk) ---
	read -r N NR NW BR BW FIRST LAST MAXGAP <<<"$(awk '
		{ n++; b = $4 * 512; if ($5 == 1) { nr++; br += b } else { nw++; bw += b }
		  if (n == 1) first = $1; else if ($1 - prev > maxgap) maxgap = $1 - prev
		  prev = $1; last = $1 }
		END { printf "%.0f %.0f %.0f %.0f %.0f %.0f %.0f %.0f\n", n, nr, nw, br, bw, first, last, maxgap }' "$SRC")"
	check events "$(jget "$D/$T.json" 'd["events"]')" "$N"
	check reads "$(jget "$D/$T.json" 'd["ops"]["read"]["count"]')" "$NR"
	check writes "$(jget "$D/$T.json" 'd["ops"]["write"]["count"]')" "$NW"
	check read_bytes "$(jget "$D/$T.json" 'd["ops"]["read"]["bytes"]')" "$BR"
	check write_bytes "$(jget "$D/$T.json" 'd["ops"]["write"]["bytes"]')" "$BW"
	check duration_ns "$(jget "$D/$T.json" 'round(d["window"]["duration_s"] * 1e9)')" "$((LAST - FIRST))"
	GOT=$(jget "$D/$T.json" 'd["overall"]["iops_mean"]')
	near "$GOT" "$(awk -v n="$N" -v d="$((LAST - FIRST))" 'BEGIN { printf "%.6f\n", n / (d / 1e9) }')" 0.01 ||
		fail "$T: iops_mean $GOT"
	check max_gap "$(jget "$D/$T.json" 'd["interarrival"]["gap"]["max_ns"]')" "$MAXGAP"

	# per-device counts
	awk '{ c[$2]++ } END { for (k in c) print k, c[k] }' "$SRC" | sort >"$D/$T.dev.want"
	jget "$D/$T.json" '"\n".join("%s %d" % (x["name"], x["count"]) for x in d["devices"])' |
		sort >"$D/$T.dev.got"
	cmp -s "$D/$T.dev.want" "$D/$T.dev.got" || fail "$T: per-device counts differ: $(diff "$D/$T.dev.want" "$D/$T.dev.got" | head -3)"

	# top request size per op and its count
	for op in 1:read 0:write; do
		want=$(awk -v t="${op%%:*}" '$5 == t { c[$4 * 512]++ } END { for (k in c) print c[k], k }' "$SRC" |
			sort -k1,1nr -k2,2n | head -1)
		got=$(jget "$D/$T.json" "'%d %d' % (d['ops']['${op#*:}']['sizes']['top'][0]['count'], d['ops']['${op#*:}']['sizes']['top'][0]['bytes'])")
		check "top size ${op#*:}" "$got" "$want"
	done

	# working set: distinct 4 KiB blocks read / written / both, and block accesses
	read -r WB WR WW WBOTH ACC <<<"$(awk '
		{ s = $3 * 512; e = s + $4 * 512 - 1
		  for (b = int(s / 4096); b <= int(e / 4096); b++) {
			k = $2 ":" b; acc++
			if ($5 == 1) r[k] = 1; else w[k] = 1; all[k]++ } }
		END { for (k in all) { nb++; if (k in r) nr++; if (k in w) nw++; if ((k in r) && (k in w)) nbo++ }
		      printf "%.0f %.0f %.0f %.0f %.0f\n", nb, nr, nw, nbo, acc }' "$SRC")"
	check ws_blocks "$(jget "$D/$T.json" 'd["working_set"]["blocks"]')" "$WB"
	check ws_read "$(jget "$D/$T.json" 'd["working_set"]["blocks_read"]')" "$WR"
	check ws_written "$(jget "$D/$T.json" 'd["working_set"]["blocks_written"]')" "$WW"
	check ws_both "$(jget "$D/$T.json" 'd["working_set"]["blocks_both"]')" "$WBOTH"
	check ws_accesses "$(jget "$D/$T.json" 'd["working_set"]["block_accesses"]')" "$ACC"
	check ws_exact "$(jget "$D/$T.json" 'd["working_set"]["exact"]')" "True"
	# skew: share of accesses on the hottest 10% of blocks (ceil)
	WANT=$(awk '{ s = $3 * 512; e = s + $4 * 512 - 1
		for (b = int(s / 4096); b <= int(e / 4096); b++) c[$2 ":" b]++ }
		END { for (k in c) print c[k] }' "$SRC" | sort -rn |
		awk -v nb="$WB" '{ v[NR] = $1; tot += $1 } END { k = int(nb * 0.10); if (k < nb * 0.10) k++
			for (i = 1; i <= k; i++) s += v[i]; printf "%.6f\n", s / tot }')
	GOT=$(jget "$D/$T.json" 'd["working_set"]["skew"]["hottest_10pct"]')
	near "$GOT" "$WANT" 0.000002 || fail "$T: skew hottest 10%: got $GOT want $WANT"

	# sequential I/Os per stream (device, direction), in file order (wsrch: no tied timestamps)
	if [ "$T" = wsrch ]; then
		for op in 1:read 0:write; do
			read -r SN SQ <<<"$(awk -v t="${op%%:*}" '$5 == t { k = $2; s = $3 * 512
				if (k in last) { n++; if (s == last[k]) q++ } last[k] = s + $4 * 512 }
				END { printf "%.0f %.0f\n", n, q }' "$SRC")"
			check "stream ${op#*:} ios" "$(jget "$D/$T.json" "d['locality']['streams']['${op#*:}']['ios']")" "$SN"
			check "stream ${op#*:} sequential" "$(jget "$D/$T.json" "d['locality']['streams']['${op#*:}']['sequential']")" "$SQ"
		done
	fi

	# absent fields are said to be absent, not zeros
	grep -q "not in trace: no completion times" "$D/$T.txt" || fail "$T: text does not say latency is absent"
	grep -q "Per process: not in trace (no pid field)" "$D/$T.txt" || fail "$T: text does not say pid is absent"
	check latency_null "$(jget "$D/$T.json" 'd["ops"]["read"]["latency"]["device"]')" "None"
	check processes_null "$(jget "$D/$T.json" 'd["processes"]')" "None"
	check fields_complete "$(jget "$D/$T.json" 'd["fields"]["complete"]')" "none"
done

# time window and device filter on wsrch: expected from awk over the same window
T=wsrch
SRC=$DATA/mqsim_wsrch-small.trace
FIRST=$(awk 'NR == 1 { print $1 }' "$SRC")
"$BIOTAPE" analyze "$D/wsrch.btape" --from 10s --to 20s --device 1 --json >"$D/win.json" || fail "window"
WANT=$(awk -v f="$FIRST" '$2 == 1 && $1 - f >= 10e9 && $1 - f < 20e9 { n++ } END { print n + 0 }' "$SRC")
check "window+device events" "$(jget "$D/win.json" 'd["events"]')" "$WANT"
[ "$WANT" -gt 0 ] || fail "window selects nothing: bad test"

# merging: the same trace given twice doubles every count and keeps the duration
"$BIOTAPE" analyze "$D/tpcc.btape" "$D/tpcc.btape" --json >"$D/two.json" || fail "two files"
check merged_events "$(jget "$D/two.json" 'd["events"]')" "$((2 * $(jget "$D/tpcc.json" 'd["events"]')))"
check merged_duration "$(jget "$D/two.json" 'd["window"]["duration_s"]')" "$(jget "$D/tpcc.json" 'd["window"]["duration_s"]')"
pass "analyze matches awk on the MQSim traces"
