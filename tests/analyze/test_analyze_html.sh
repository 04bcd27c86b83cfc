#!/bin/bash
# The HTML reports in headless Chromium: the page loads from file:// without network or
# console errors, every chart is present in the parsed DOM with drawn marks, and the
# screenshot shows the series and heat-map colours.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
CHROMIUM=$(command -v chromium || command -v chromium-browser) || skip "needs chromium (Debian: chromium)"
command -v python3 >/dev/null || skip "needs python3"
t_gen
D=$(t_tmpdir) || exit 1

chrome() { # chrome OUT_STDOUT ARGS...: one headless run with a throwaway profile
	local out=$1 prof
	shift
	prof=$(mktemp -d "$D/prof.XXXXXX")
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-background-networking \
		--disable-component-update --disable-sync --no-first-run --user-data-dir="$prof" \
		--enable-logging=stderr --v=0 "$@" >"$out" 2>>"$D/chrome.err"
}

"$GEN" -p mixed -n 30000 -o "$D/a.btape" -x 3 || fail "gen"
"$GEN" -p mixed -n 20000 -o "$D/b.btape" -x 4 -F 10 || fail "gen b (every 10th a flush)"
"$BIOTAPE" analyze "$D/a.btape" --html "$D/a.html" || fail "analyze --html"
"$BIOTAPE" analyze "$D/a.btape" --json >"$D/a.json" || fail "analyze --json"
"$BIOTAPE" analyze "$D/b.btape" --html "$D/b.html" || fail "analyze --html (flushes)"
"$BIOTAPE" compare "$D/a.btape" "$D/b.btape" --html "$D/c.html" || fail "compare --html"

for f in a c; do
	grep -qiE '<script|<link|<img|<iframe|(src|href)=' "$D/$f.html" && fail "$f.html: external or scripted content"
done

: >"$D/chrome.err"
chrome "$D/a.dom" --dump-dom "file://$D/a.html" || fail "chromium --dump-dom failed"
chrome "$D/c.dom" --dump-dom "file://$D/c.html" || fail "chromium --dump-dom (compare) failed"
grep -E 'CONSOLE|Uncaught|SyntaxError' "$D/chrome.err" && fail "console errors"

# count drawn marks per chart in the DOM as Chromium parsed it
cat >"$D/marks.py" <<'PY'
import sys
from html.parser import HTMLParser
class P(HTMLParser):
    def __init__(self):
        super().__init__(); self.cur = None; self.marks = {}; self.nodata = set()
    def handle_starttag(self, tag, a):
        a = dict(a)
        if tag == "svg" and a.get("class") == "chart":
            self.cur = a["data-chart"]; self.marks[self.cur] = 0
        elif self.cur and (tag in ("path", "rect")) and a.get("class") in ("series", "bar", "cell"):
            self.marks[self.cur] += 1
        elif self.cur and tag == "text" and a.get("class") == "nodata":
            self.nodata.add(self.cur)
    def handle_endtag(self, tag):
        if tag == "svg": self.cur = None
p = P(); p.feed(open(sys.argv[1]).read())
for k, v in p.marks.items(): print(k, v, "nodata" if k in p.nodata else "drawn")
PY
python3 "$D/marks.py" "$D/a.dom" >"$D/a.marks"
for c in iops throughput sizes-read sizes-write latency-cdf queue-cdf heatmap-0 heatmap-1 \
	queue-depth interarrival; do
	line=$(grep "^$c " "$D/a.marks") || fail "chart $c missing: $(cat "$D/a.marks")"
	set -- $line
	[ "$2" -ge 1 ] && [ "$3" = drawn ] || fail "chart $c not drawn: $line"
done
[ "$(awk '$1 == "iops" { print $2 }' "$D/a.marks")" = 3 ] || fail "IOPS chart: want 3 series"
python3 "$D/marks.py" "$D/c.dom" >"$D/c.marks"
for c in latency-cdf-read latency-cdf-write iops; do
	[ "$(awk -v c="$c" '$1 == c { print $2 }' "$D/c.marks")" = 2 ] ||
		fail "compare chart $c: want A and B overlaid: $(cat "$D/c.marks")"
done
# device time by the depth at issue: p50 and p99 of reads and writes; in compare, of A and B
[ "$(awk '$1 == "latency-by-depth" { print $2 " " $3 }' "$D/a.marks")" = "4 drawn" ] ||
	fail "latency-by-depth: want 4 lines (read, write x p50, p99): $(cat "$D/a.marks")"
for c in latency-by-depth-read latency-by-depth-write; do
	[ "$(awk -v c="$c" '$1 == c { print $2 }' "$D/c.marks")" = 4 ] ||
		fail "compare chart $c: want A and B, p50 and p99: $(cat "$D/c.marks")"
done

# pixels: series blue and heat-map red visible in a screenshot
chrome /dev/null --hide-scrollbars --window-size=1000,1500 --screenshot="$D/a.png" "file://$D/a.html" ||
	fail "screenshot failed"
[ -s "$D/a.png" ] || fail "no screenshot"
python3 "$BIOTAPE_SRC/tests/analyze/png_colors.py" "$D/a.png" 1f77b4 d62728 >"$D/px" || fail "png decode"
[ "$(awk '$1 == "1f77b4" { print $2 }' "$D/px")" -gt 500 ] || fail "series colour not drawn: $(cat "$D/px")"
[ "$(awk '$1 == "d62728" { print $2 }' "$D/px")" -gt 100 ] || fail "write series not drawn: $(cat "$D/px")"
# headline cards: the values the JSON has; axis ticks round, with units
cat >"$D/cards.py" <<'PY'
import json, re, sys
from html.parser import HTMLParser
class P(HTMLParser):
    def __init__(self):
        super().__init__(); self.cards = {}; self.svg = False; self.intext = False; self.ticks = []
    def handle_starttag(self, tag, a):
        a = dict(a)
        if tag == "div" and a.get("class") == "card": self.cards[a["data-key"]] = float(a["data-value"])
        if tag == "svg": self.svg = True
        if tag == "text" and self.svg and a.get("text-anchor") == "end" and a.get("x") == "60": self.intext = True
    def handle_endtag(self, tag):
        if tag == "svg": self.svg = False
        if tag == "text": self.intext = False
    def handle_data(self, d):
        if self.intext: self.ticks.append(d)
p = P(); p.feed(open(sys.argv[1]).read())
j = json.load(open(sys.argv[2]))
want = {"iops_mean": j["overall"]["iops_mean"], "throughput_mean_bps": j["overall"]["throughput_mean_bps"],
        "working_set_blocks": j["working_set"]["blocks"],
        "read_share": j["ops"]["read"]["count"] / (j["ops"]["read"]["count"] + j["ops"]["write"]["count"])}
for op in ("read", "write"):
    want["p99_%s_ns" % op] = j["ops"][op]["latency"]["device"]["p99_ns"]
bad = [k for k, v in want.items() if k not in p.cards or abs(p.cards[k] - v) > 1e-6 * max(1, abs(v))]
if bad: sys.exit("cards differ from the JSON: %s (cards %s)" % (bad, p.cards))
odd = [t for t in p.ticks if not re.fullmatch(r"0|[0-9]+(\.[0-9]+)?(k|M|G| B| KiB| MiB| GiB| ns| µs| ms| s)?", t)]
if odd or not p.ticks: sys.exit("axis ticks not round numbers with units: %s" % (odd or "none found"))
print(len(p.cards), "cards,", len(p.ticks), "ticks")
PY
python3 "$D/cards.py" "$D/a.dom" "$D/a.json" || fail "headline cards or axis ticks wrong"
"$BIOTAPE" compare "$D/a.btape" "$D/b.btape" --json >"$D/c.json" || fail "compare --json"
python3 - "$D/c.dom" "$D/c.json" <<'PY' || fail "compare page: fidelity cards differ from the JSON"
import json, re, sys
cards = {k: float(v) for k, v in re.findall(r'class="card" data-key="([a-z_]+)" data-value="([^"]+)"', open(sys.argv[1]).read())}
f = json.load(open(sys.argv[2]))["fidelity"]
for k in ("iops_window_correlation", "interarrival_ks"):
    if k not in cards or abs(cards[k] - f[k]) > 1e-6: sys.exit("%s: card %s, JSON %s" % (k, cards.get(k), f[k]))
if cards.get("phases") != len(f["phases"]): sys.exit("phases: card %s, JSON %d" % (cards.get("phases"), len(f["phases"])))
PY
# the replay sweep page (null engine over sparse files: no device is written)
truncate -s 20G "$D/t0" "$D/t1" || fail "truncate"
"$BIOTAPE" replay "$D/a.btape" --map synth0="$D/t0" --map synth1="$D/t1" --engine null --timing afap \
	--writes-as-reads --fit wrap --sweep 1,2,4 --html "$D/s.html" --json >"$D/s.json" || fail "replay --sweep --html"
rm -f "$D/t0" "$D/t1"
: >"$D/chrome.err"
chrome "$D/s.dom" --dump-dom "file://$D/s.html" || fail "chromium --dump-dom (sweep) failed"
grep -E 'CONSOLE|Uncaught|SyntaxError' "$D/chrome.err" && fail "console errors (sweep)"
python3 "$D/marks.py" "$D/s.dom" >"$D/s.marks"
[ "$(awk '$1 == "sweep" { print $2 }' "$D/s.marks")" = 2 ] || fail "sweep chart: want p50 and p99: $(cat "$D/s.marks")"
python3 - "$D/s.dom" "$D/s.json" <<'PY' || fail "sweep page: cards differ from the JSON"
import json, re, sys
dom = open(sys.argv[1]).read()
cards = {k: float(v) for k, v in re.findall(r'class="card" data-key="([a-z_]+)" data-value="([^"]+)"', dom)}
j = json.load(open(sys.argv[2]))
best = max(s["iops"] for s in j["sweep"])
if abs(cards.get("iops_max", -1) - best) > 1e-6 * best: sys.exit("iops_max %s vs %s" % (cards.get("iops_max"), best))
if cards.get("knee") != (j["knee"] or 0): sys.exit("knee %s vs %s" % (cards.get("knee"), j["knee"]))
if ("No knee up to x4" in dom) != (j["knee"] is None): sys.exit("knee sentence does not match the JSON")
PY
grep -q 'data-chart="sizes-flush"' "$D/b.html" && fail "a size chart for flushes (they carry no data)"
grep -q 'data-chart="sizes-read"' "$D/b.html" || fail "b.html: no read size chart"
pass "HTML reports load offline in Chromium with every chart drawn"
