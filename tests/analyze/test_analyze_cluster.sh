#!/bin/bash
# Several hosts' traces on one timeline (biotape analyze FILES..., --align, compare A1,A2 B1):
# three files of one cluster recording whose clocks are off by known amounts (+3 ms, -7 ms)
# are put back in the order their first I/Os happened, exactly; unrelated files are refused
# with one line; per-host rows add up to the cluster totals; info shows the cluster clock; the
# HTML report draws IOPS and device time per host on the one timeline; a file cut short is
# named with its host and rank.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
command -v python3 >/dev/null || skip "needs python3 (JSON checks)"
GEN=$BIOTAPE_BIN_DIR/gen_trace
[ -x "$GEN" ] || fail "missing $GEN"
D=$(t_tmpdir) || exit 1
jget() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

# On the reference clock the hosts start at 2.000 s, 2.001 s and 2.002 s. h1's clock is 3 ms
# ahead (drifting 1 us more by 3 s), h2's 7 ms behind: as recorded, h2 seems first and h1 last.
S0=1000000000 S1=3000000000
"$GEN" -o "$D/h0.btape" -n 3000 -x 1 -H h0 -T 2000000000 -C rec7,0,3,h0,$S0,0,0,$S1,0,0 ||
	fail "gen h0"
"$GEN" -o "$D/h1.btape" -n 3000 -x 2 -H h1 -T 2004000502 -C rec7,1,3,h0,$S0,3000000,20,$S1,3001000,30 ||
	fail "gen h1"
"$GEN" -o "$D/h2.btape" -n 3000 -x 3 -H h2 -T 1995000000 -C rec7,2,3,h0,$S0,-7000000,40,$S1,-7000000,25 ||
	fail "gen h2"
"$GEN" -o "$D/other.btape" -n 100 -H h9 -C rec8,1,2,h0,$S0,0,0 || fail "gen other"
"$GEN" -o "$D/plain.btape" -n 100 -H h9 || fail "gen plain"

"$BIOTAPE" info "$D/h1.btape" >"$D/info" || fail "info"
grep -q "^cluster: *recording rec7, rank 1 of 3, reference host h0" "$D/info" || fail "info cluster"
grep -q "^drift: *+0.500 ppm" "$D/info" || fail "info drift: $(grep drift "$D/info")"

"$BIOTAPE" analyze --json "$D/h0.btape" "$D/h1.btape" "$D/h2.btape" >"$D/c.json" || fail "analyze"
[ "$(jget "$D/c.json" 'd["alignment"]["align"]')" = cluster ] || fail "not aligned by cluster"
# h1's first I/O at local 2.004000502 s: offset 3 ms + 1 us * 1.004000502 s / 2 s = 3000502 ns
# (rounded), so 2.001 s exactly on h0's clock; raw, h2's would come first and h1's last
python3 - "$D/c.json" <<'PY' || fail "not one timeline"
import json, sys
d = json.load(open(sys.argv[1]))
h = {x["name"]: x for x in d["hosts"]}
f = {k: v["first_issue_ns"] for k, v in h.items()}
assert f == {"h0": 0, "h1": 1000000, "h2": 2000000}, f
assert sum(v["count"] for v in h.values()) == d["overall"]["count"] == 9000
# the correction moves whole events: latencies are as recorded (50 us)
assert all(v["latency_device"]["max_ns"] == 50000 for v in h.values()), h
assert [x["name"] for x in d["devices"]] == ["h0:loop0", "h1:loop0", "h2:loop0"], d["devices"]
PY
"$BIOTAPE" analyze --json --align none "$D/h0.btape" "$D/h1.btape" "$D/h2.btape" >"$D/n.json" ||
	fail "analyze --align none"
[ "$(jget "$D/n.json" '[h["first_issue_ns"] for h in d["hosts"]]')" = "[5000000, 9000502, 0]" ] ||
	fail "--align none moved times: $(jget "$D/n.json" '[h["first_issue_ns"] for h in d["hosts"]]')"
"$BIOTAPE" analyze --json --align start "$D/h0.btape" "$D/h2.btape" "$D/other.btape" >"$D/s.json" ||
	fail "analyze --align start"
[ "$(jget "$D/s.json" '[h["first_issue_ns"] for h in d["hosts"]]')" = "[0, 0, 0]" ] ||
	fail "--align start"

# a window on the timeline: --from seeks each file on its own clock (h2's is 7 ms behind)
"$BIOTAPE" analyze --json --from 1500us "$D/h0.btape" "$D/h1.btape" "$D/h2.btape" >"$D/w.json" ||
	fail "analyze --from"
python3 - "$D/c.json" "$D/w.json" <<'PY' || fail "--from on one timeline"
import json, sys
a, w = (json.load(open(p)) for p in sys.argv[1:])
h = {x["name"]: x for x in w["hosts"]}
assert w["window"]["start_s"] >= 0.0015, w["window"]
# h2 starts at 2 ms: all of it is in the window; h0 and h1 lose their first 1.5 / 0.5 ms
full = {x["name"]: x["count"] for x in a["hosts"]}
assert h["h2"]["count"] == full["h2"] == 3000, (h["h2"]["count"], full)
assert h["h2"]["first_issue_ns"] == 2000000, h["h2"]["first_issue_ns"]
assert 0 < h["h0"]["count"] < full["h0"] and 0 < h["h1"]["count"] < full["h1"], h
assert h["h0"]["first_issue_ns"] >= 1500000 and h["h1"]["first_issue_ns"] >= 1500000, h
PY

# the text report: per-host rows, the corrections
"$BIOTAPE" analyze "$D/h0.btape" "$D/h1.btape" "$D/h2.btape" >"$D/c.txt" || fail "analyze text"
grep -q "one timeline: cluster recording rec7, 3 files, on the clock of h0" "$D/c.txt" ||
	fail "no timeline line"
grep -q "^  h1  .* 3000 " "$D/c.txt" || fail "no h1 row: $(sed -n '/Per host/,/Per device/p' "$D/c.txt")"
grep -q "^  h2 *offset -7000.000 us +- 0.040 us" "$D/c.txt" || fail "no h2 correction"

# a host's file cut short (its recorder killed before the footer): the report names it
"$GEN" -o "$D/k1.btape" -n 3000 -x 2 -H h1 -T 2004000502 -C rec7,1,3,h0,$S0,3000000,20 -k 2>/dev/null
[ -s "$D/k1.btape" ] || fail "gen k1 (killed)"
"$BIOTAPE" analyze "$D/h0.btape" "$D/k1.btape" "$D/h2.btape" >"$D/k.txt" || fail "analyze with a cut file"
[ "$(grep -c WARNING "$D/k.txt")" = 1 ] || fail "not one warning: $(grep WARNING "$D/k.txt")"
grep -q "^  WARNING: $D/k1.btape (host h1, rank 1) was cut short" "$D/k.txt" ||
	fail "cut file not named: $(sed -n 1,5p "$D/k.txt")"
"$BIOTAPE" analyze --json "$D/h0.btape" "$D/k1.btape" "$D/h2.btape" >"$D/k.json" || fail "analyze --json"
[ "$(jget "$D/k.json" '[(x["host"], x["rank"], x["cut_short"], x["stopped_early"]) for x in d["incomplete"]]')" = \
	"[('h1', 1, True, False)]" ] || fail "json incomplete: $(jget "$D/k.json" 'd.get("incomplete")')"
[ "$(jget "$D/c.json" '"incomplete" in d')" = False ] || fail "incomplete listed for whole files"

# the timeline per host (JSON): its rows add up to the host's count, and to the timeline's
python3 - "$D/c.json" <<'PY' || fail "per-host timeline"
import json, sys
d = json.load(open(sys.argv[1]))
tl, hosts = d["timeline"], {h["name"]: h for h in d["hosts"]}
th = {h["name"]: h for h in tl["hosts"]}
assert sorted(th) == ["h0", "h1", "h2"], sorted(th)
for n, h in th.items():
    assert len(h["ios"]) == len(tl["rows"]) == len(h["mean_device_latency_ns"]), n
    assert sum(h["ios"]) == hosts[n]["count"] == 3000, (n, sum(h["ios"]))
for i, row in enumerate(tl["rows"]):
    assert sum(th[n]["ios"][i] for n in th) == row[1] + row[2] + row[3], i
PY
# the HTML report: IOPS and device time per host on the one timeline, a series per host
"$BIOTAPE" analyze "$D/h0.btape" "$D/h1.btape" "$D/h2.btape" --html "$D/c.html" || fail "analyze --html"
python3 - "$D/c.html" <<'PY' || fail "per-host charts"
import re, sys
html = open(sys.argv[1]).read()
for chart in ("host-iops", "host-latency"):
    m = re.search(r'<svg class="chart" data-chart="%s".*?</svg>' % chart, html, re.S)
    assert m, chart + " missing"
    svg = m.group(0)
    series = re.findall(r'<path class="series"[^>]*d="([^"]*)"><title>([^<:]*):', svg)
    assert sorted(n for _, n in series) == ["h0", "h1", "h2"], (chart, [n for _, n in series])
    for d, n in series:  # one point per timeline row, drawn
        assert d.startswith("M") and d.count("L") >= 50, (chart, n, d[:80])
    for h in ("h0", "h1", "h2"):  # the legend names every host
        assert re.search(r'<text x="\d+" y="17">%s</text>' % h, svg), (chart, h)
PY
"$BIOTAPE" compare "$D/h0.btape,$D/h1.btape,$D/h2.btape" "$D/h0.btape" --html "$D/cmp.html" ||
	fail "compare --html"
python3 - "$D/cmp.html" <<'PY' || fail "compare: per-host charts of side A"
import re, sys
html = open(sys.argv[1]).read()
assert "A, per host over time" in html
assert 'data-chart="host-iops-b"' not in html  # B is one host
m = re.search(r'<svg class="chart" data-chart="host-iops-a".*?</svg>', html, re.S)
assert m and sorted(re.findall(r'<title>(h[0-2]): peak', m.group(0))) == ["h0", "h1", "h2"]
PY
# seven hosts: the six busiest drawn (host g0 has the fewest I/Os), the seventh counted
seven=()
for r in 0 1 2 3 4 5 6; do
	"$GEN" -o "$D/g$r.btape" -n $((300 + 10 * r)) -x $((r + 1)) -H g$r -T 2000000000 \
		-C rec5,$r,7,g0,$S0,0,0 || fail "gen g$r"
	seven+=("$D/g$r.btape")
done
"$BIOTAPE" analyze "${seven[@]}" --html "$D/g.html" || fail "analyze --html, seven hosts"
python3 - "$D/g.html" <<'PY' || fail "seven hosts' charts"
import re, sys
html = open(sys.argv[1]).read()
m = re.search(r'<svg class="chart" data-chart="host-iops".*?</svg>', html, re.S)
assert sorted(re.findall(r'<title>(g[0-6]): peak', m.group(0))) == ["g%d" % i for i in range(1, 7)]
assert "1 less busy host not drawn" in html
PY
"$BIOTAPE" analyze "$D/h0.btape" --html "$D/one.html" || fail "analyze --html one host"
grep -q 'data-chart="host-' "$D/one.html" && fail "per-host charts for one host"

# unrelated files are refused together, one line, naming both; nothing on stdout
for other in other plain; do
	"$BIOTAPE" analyze "$D/h0.btape" "$D/$other.btape" >"$D/out" 2>"$D/err"
	rc=$?
	[ $rc = 2 ] || fail "$other: exit $rc, want 2"
	[ "$(wc -l <"$D/err")" = 1 ] && [ ! -s "$D/out" ] || fail "$other: $(cat "$D/err")"
	grep -q "h0.btape.*$other.btape\|$other.btape.*h0.btape" "$D/err" || fail "$(cat "$D/err")"
	grep -q -- "--align" "$D/err" || fail "no hint: $(cat "$D/err")"
done
"$BIOTAPE" analyze --align cluster "$D/h0.btape" "$D/plain.btape" >/dev/null 2>"$D/err" &&
	fail "--align cluster accepted a plain file"
"$BIOTAPE" analyze --align sideways "$D/h0.btape" 2>"$D/err" && fail "bad --align accepted"
grep -q "not auto, cluster, start, wall or none" "$D/err" || fail "$(cat "$D/err")"
# one host's files without a cluster clock: merged as recorded, as before (no per-host rows)
"$BIOTAPE" analyze "$D/plain.btape" "$D/plain.btape" >"$D/pp.txt" || fail "one host's files"
grep -q "Per host" "$D/pp.txt" && fail "per-host rows for one host"

# compare takes a cluster recording per side
"$BIOTAPE" compare "$D/h0.btape,$D/h1.btape,$D/h2.btape" "$D/h1.btape,$D/h2.btape" >"$D/cmp" ||
	fail "compare lists"
grep -q "A = .*h0.btape and 2 more (9,000 events)" "$D/cmp" || fail "compare A: $(head -3 "$D/cmp")"
grep -q "^  h0  *[0-9.]*  *- " "$D/cmp" || fail "compare per host: $(cat "$D/cmp")"
"$BIOTAPE" compare --json "$D/h0.btape,$D/h1.btape,$D/h2.btape" "$D/h0.btape" >"$D/cmp.json" ||
	fail "compare --json"
[ "$(jget "$D/cmp.json" 'len(d["a"]["hosts"])')" = 3 ] || fail "compare json hosts"
# convert --merge: one multi-host trace, hosts in its device table, the same analysis
"$BIOTAPE" convert -q --merge "$D/h0.btape" "$D/h1.btape" "$D/h2.btape" "$D/m.btape" ||
	fail "convert --merge"
"$BIOTAPE" info --json "$D/m.btape" >"$D/m.info" || fail "info merged"
[ "$(jget "$D/m.info" '[x["host"] + ":" + x["name"] for x in d["devices"]]')" = \
	"['h0:loop0', 'h1:loop0', 'h2:loop0']" ] || fail "merged device table"
"$BIOTAPE" analyze --json "$D/m.btape" >"$D/m.json" || fail "analyze merged"
python3 - "$D/c.json" "$D/m.json" <<'PY' || fail "merged trace analyses differently"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
for k in ("hosts", "overall", "ops", "devices", "timeline", "working_set", "queue_depth"):
    assert a[k] == b[k], k
PY
"$BIOTAPE" convert --merge "$D/h0.btape" "$D/other.btape" "$D/bad.btape" 2>"$D/err" &&
	fail "merge of unrelated files accepted"
[ "$(wc -l <"$D/err")" = 1 ] && [ ! -e "$D/bad.btape" ] || fail "merge refusal: $(cat "$D/err")"
"$BIOTAPE" convert --merge --align start "$D/h0.btape" "$D/other.btape" "$D/s.btape" >/dev/null ||
	fail "merge --align start"
pass
