#!/usr/bin/env bash
# An output is never one of the command's inputs (docs/SAFETY.md, section 1): analyze --html,
# compare --html, replay -o / --html and convert refuse an output path that names a trace (or a
# foreign trace) they read, by any name (./a.btape, a symlink, a hard link), with one line and
# exit 2, and leave it as it was. analyze a.btape --html a.btape used to replace the only
# copy of a recording with its HTML report, and replay -o with the replay's result.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
t_gen
D=$(t_tmpdir) || exit 1
"$GEN" -o "$D/a.btape" -n 200 -S $((1 << 20)) || fail "gen"
cp "$D/a.btape" "$D/b.btape"
ln -s a.btape "$D/l.btape"
ln "$D/a.btape" "$D/h.btape"
truncate -s 1M "$D/tgt"
printf '128166372003061629,hm,1,Read,3584,4096,4177\n' >"$D/s.csv"
sum=$(md5sum <"$D/a.btape")
csum=$(md5sum <"$D/s.csv")

# refused CMD...: exit 2, one line "is both input and output", the inputs unchanged
refused() {
	local rc=0
	(cd "$D" && timeout -s KILL 30 "$@") >/dev/null 2>"$D/err" || rc=$?
	[ $rc = 2 ] || fail "$*: exit $rc, want 2 ($(cat "$D/err"))"
	[ "$(wc -l <"$D/err")" = 1 ] || fail "$*: not one line: $(cat "$D/err")"
	grep -q "is both input and output\|name the same file" "$D/err" ||
		fail "$*: message: $(cat "$D/err")"
	[ "$(md5sum <"$D/a.btape")" = "$sum" ] || fail "$*: the input trace was changed"
	[ -L "$D/l.btape" ] && [ "$(md5sum <"$D/h.btape")" = "$sum" ] ||
		fail "$*: a link to the input was replaced"
	[ "$(md5sum <"$D/s.csv")" = "$csum" ] || fail "$*: the input CSV was changed"
	[ -z "$(ls "$D" | grep '\.tmp\.')" ] || fail "$*: temporary file left: $(ls "$D")"
}

for out in a.btape ./a.btape l.btape h.btape "$D/a.btape"; do
	refused "$BIOTAPE" analyze a.btape --html "$out"
	refused "$BIOTAPE" analyze b.btape a.btape --html "$out"
	refused "$BIOTAPE" compare b.btape a.btape --html "$out"
	refused "$BIOTAPE" compare b.btape,a.btape b.btape --html "$out"
	refused "$BIOTAPE" replay a.btape --target tgt --engine null --timing afap -o "$out"
	refused "$BIOTAPE" replay a.btape --target tgt --engine null --timing afap --html "$out"
	refused "$BIOTAPE" convert a.btape "$out" --to csv
	refused "$BIOTAPE" convert --merge b.btape a.btape "$out"
done
refused "$BIOTAPE" convert s.csv ./s.csv
# --device-size FILE is an input too (it was once replaced by the converted trace)
printf '0,1073741824\n' >"$D/ds.csv"
printf '0,R,4096,4096,1000\n' >"$D/ali.csv"
dsum=$(md5sum <"$D/ds.csv")
for out in ds.csv ./ds.csv; do
	refused "$BIOTAPE" convert --from alibaba --device-size ds.csv ali.csv "$out"
	[ "$(md5sum <"$D/ds.csv")" = "$dsum" ] || fail "convert over --device-size: it was changed"
done
"$BIOTAPE" convert -q --from alibaba --device-size "$D/ds.csv" "$D/ali.csv" "$D/ali.btape" ||
	fail "convert --from alibaba --device-size"
refused "$BIOTAPE" replay a.btape --target tgt --engine null --timing afap -o r.btape \
	--html r.btape
[ ! -e "$D/r.btape" ] || fail "replay -o X --html X wrote X"
for pair in "r.btape ./r.btape" "./r.btape $D/r.btape" "b.btape h2.btape"; do
	set -- $pair
	[ "$1" != b.btape ] || ln -f "$D/b.btape" "$D/h2.btape"
	refused "$BIOTAPE" replay a.btape --target tgt --engine null --timing afap -o "$1" \
		--html "$2"
done
rm -f "$D/h2.btape"
[ ! -e "$D/r.btape" ] || fail "replay -o X --html ./X wrote X"

# an input given twice (by any name) would be read twice: its events twice in the result
for pair in "a.btape a.btape" "a.btape ./h.btape" "s.csv ./s.csv"; do
	set -- $pair
	args=("$1" "$2")
	[ "$1" = s.csv ] || args=(--merge "${args[@]}")
	rc=0
	(cd "$D" && "$BIOTAPE" convert "${args[@]}" twice.btape) >/dev/null 2>"$D/err" || rc=$?
	[ $rc = 2 ] || fail "convert ${args[*]}: exit $rc, want 2 ($(cat "$D/err"))"
	grep -q "are the same file: an input given twice" "$D/err" ||
		fail "convert ${args[*]}: message: $(cat "$D/err")"
	[ ! -e "$D/twice.btape" ] || fail "convert ${args[*]}: wrote twice.btape"
done
# other outputs are still written, and replaced
"$BIOTAPE" analyze "$D/a.btape" --html "$D/b.html" >/dev/null || fail "analyze --html"
"$BIOTAPE" analyze "$D/a.btape" --html "$D/b.html" >/dev/null || fail "analyze --html over a report"
"$BIOTAPE" compare "$D/a.btape" "$D/b.btape" --html "$D/c.html" >/dev/null || fail "compare --html"
"$BIOTAPE" replay "$D/a.btape" --target "$D/tgt" --engine null --timing afap \
	-o "$D/b.btape" >/dev/null || fail "replay -o over another trace"
"$BIOTAPE" convert -q "$D/a.btape" "$D/a.csv" || fail "convert"
"$BIOTAPE" convert -q "$D/a.btape" "$D/./a.csv" || fail "convert over the last export"
pass
