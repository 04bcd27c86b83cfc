#!/bin/bash
# Screenshots of the three report pages for reviewers: analyze --html, compare --html (with the
# fidelity score) and replay --sweep --html (null engine over sparse files: nothing is written
# to any device), from generated traces, in headless Chromium at 1280 px.
#   usage: bench/report/screenshots.sh BUILD_DIR OUT_DIR
#   OUT_DIR gets analyze.{html,png}, compare.{html,png}, sweep.{html,png}.
set -eu
B=${1:?usage: $0 BUILD_DIR OUT_DIR}/bin
OUT=${2:?usage: $0 BUILD_DIR OUT_DIR}
CHROMIUM=$(command -v chromium || command -v chromium-browser) || { echo "needs chromium" >&2; exit 2; }
mkdir -p "$OUT"
TMP=$(mktemp -d /dev/shm/biotape-shots.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
"$B/gen_trace" -p mixed -n 200000 -o "$TMP/a.btape" -x 3 -F 50
"$B/gen_trace" -p mixed -n 150000 -o "$TMP/b.btape" -x 4 -F 50
"$B/biotape" analyze "$TMP/a.btape" --html "$OUT/analyze.html"
"$B/biotape" compare "$TMP/a.btape" "$TMP/b.btape" --html "$OUT/compare.html"
truncate -s 20G "$TMP/t0" "$TMP/t1"
"$B/biotape" replay "$TMP/a.btape" --map synth0="$TMP/t0" --map synth1="$TMP/t1" --engine null \
	--timing afap --writes-as-reads --fit wrap --sweep 1,2,4,8 --html "$OUT/sweep.html" >/dev/null
for p in analyze compare sweep; do
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--user-data-dir="$TMP/prof" --window-size=1280,2000 --screenshot="$OUT/$p.png" \
		"file://$(cd "$OUT" && pwd)/$p.html" >/dev/null 2>&1
	echo "$OUT/$p.png"
done
