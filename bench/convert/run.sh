#!/usr/bin/env bash
# Import speed of `biotape convert` on generated inputs, against floors measured in the same
# run: `wc -l` (CSV) and `zstd -d` (the same input compressed), alternating, median of RUNS.
# Prints lines/s, peak RSS, and the ratio to the floor. Usage:
#   bench/convert/run.sh [BIOTAPE] [N...]     (default N: 1000000 10000000; RUNS=3)
# The inputs come from gen_trace -p alibaba / -p blktrace (GEN=PATH; default: beside BIOTAPE).
# Inputs live in /dev/shm and are removed at the end. Not part of the test suite.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
BIOTAPE=${1:-$here/../../build/bin/biotape}
shift || true
GEN=${GEN:-$(dirname "$BIOTAPE")/gen_trace} # the trace generator of the same build
[ -x "$GEN" ] || { echo "missing $GEN (GEN=/path/to/gen_trace)" >&2; exit 1; }
SIZES=${*:-1000000 10000000}
RUNS=${RUNS:-3}
W=$(mktemp -d /dev/shm/biotape-bench-convert.XXXXXX)
trap 'rm -rf "$W"' EXIT

# measure LABEL CMD...: appends "seconds maxrss_kb user sys" of one run to $W/LABEL
measure() {
	local label=$1
	shift
	/usr/bin/time -f "%e %M %U %S" -o "$W/t" "$@" >/dev/null 2>"$W/err" ||
		{ cat "$W/err" >&2; exit 1; }
	cat "$W/t" >>"$W/$label"
}
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
med_time() { awk '{ print $1 }' "$W/$1" | median; }
med_rss() { awk '{ print $2 }' "$W/$1" | median; }
med_cpu() { awk '{ print $3 + $4 }' "$W/$1" | median; }

printf '%-27s %9s %7s %7s %9s %9s %9s %8s\n' input records "wall s" "cpu s" "M/s wall" \
	"M/s cpu" "peak RSS" "vs floor"
for n in $SIZES; do
	"$GEN" -p alibaba -n "$n" -o "$W/ali.csv"
	zstd -q -1 -T1 -c "$W/ali.csv" >"$W/ali.csv.zst"
	"$GEN" -p blktrace -n "$n" -o "$W/sda.blktrace.0"
	zstd -q -1 -T1 -c "$W/sda.blktrace.0" >"$W/bt.zst"
	recs=$(( n / 3 * 3 ))
	rm -f "$W"/*.times "$W"/{csv,wc,zcsv,unz,bt,btunz}
	for r in $(seq "$RUNS"); do
		measure wc wc -l "$W/ali.csv"
		measure csv "$BIOTAPE" convert -q --from alibaba "$W/ali.csv" "$W/out.btape"
		measure unz zstd -q -d -c "$W/ali.csv.zst"
		measure zcsv "$BIOTAPE" convert -q --from alibaba "$W/ali.csv.zst" "$W/out.btape"
		measure btunz zstd -q -d -c "$W/bt.zst"
		measure bt "$BIOTAPE" convert -q --from blktrace "$W/sda.blktrace.0" "$W/out2.btape"
		rm -f "$W/out.btape" "$W/out2.btape"
	done
	row() { # label records floor-label name
		local t c f
		t=$(med_time "$1")
		c=$(med_cpu "$1")
		f=$(med_time "$3")
		printf '%-27s %9d %7.2f %7.2f %9.2f %9.2f %6d MB %7.1fx\n' "$4" "$2" "$t" "$c" \
			"$(echo "$2 / $t / 1000000" | bc -l)" "$(echo "$2 / ($c + 0.001) / 1000000" | bc -l)" \
			$(( $(med_rss "$1") / 1024 )) "$(echo "$t / ($f + 0.001)" | bc -l)"
	}
	row csv "$n" wc "alibaba csv (floor wc -l)"
	row zcsv "$n" unz "alibaba csv.zst (zstd -d)"
	row bt "$recs" btunz "blktrace bin (zstd -d)"
	floor() { # label records name
		local t c
		t=$(med_time "$1")
		c=$(med_cpu "$1")
		printf '%-27s %9d %7.2f %7.2f %9.2f %9.2f %6d MB\n' "$3" "$2" "$t" "$c" \
			"$(echo "$2 / ($t + 0.001) / 1000000" | bc -l)" \
			"$(echo "$2 / ($c + 0.001) / 1000000" | bc -l)" $(( $(med_rss "$1") / 1024 ))
	}
	floor wc "$n" "  floor: wc -l csv"
	floor unz "$n" "  floor: zstd -d csv.zst"
	floor btunz "$recs" "  floor: zstd -d blktrace.zst"
	rm -f "$W/ali.csv" "$W/ali.csv.zst" "$W/sda.blktrace.0" "$W/bt.zst"
done
echo "(convert reads its input twice: pass 1 builds the device table and validates, pass 2 writes)"
