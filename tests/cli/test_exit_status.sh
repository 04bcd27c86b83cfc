#!/usr/bin/env bash
# Every command that reads a trace exits as the man page says (EXIT STATUS): 1 when the file
# cannot be opened (missing, a directory, no permission), 2 when what it holds is bad (a damaged
# or foreign file), each with one line on stderr and nothing on stdout.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
t_gen
D=$(t_tmpdir) || exit 1
"$GEN" -p known -n 100 -o "$D/ok.btape" || fail "gen_trace"
head -c 20 "$D/ok.btape" >"$D/cut.btape"
printf 'not a trace at all\n' >"$D/junk.btape"
mkdir "$D/dir.btape"

# check WANT WHAT CMD ARGS...: exit WANT, one "biotape: " line naming the problem, no output
check() {
	local want=$1 what=$2 rc=0
	shift 2
	"$BIOTAPE" "$@" >"$D/out" 2>"$D/err" || rc=$?
	[ "$rc" = "$want" ] || fail "$* ($what): exit $rc, want $want: $(cat "$D/err")"
	[ "$(wc -l <"$D/err")" = 1 ] && grep -q '^biotape: ' "$D/err" ||
		fail "$* ($what): not one line: $(cat "$D/err")"
	[ ! -s "$D/out" ] || fail "$* ($what): wrote to stdout"
	[ ! -e "$D/o.csv" ] && [ ! -e "$D/o.btape" ] || fail "$* ($what): left an output"
}
for bad in missing dir; do
	f=$D/$bad.btape
	check 1 "$bad" info "$f"
	check 1 "$bad" dump "$f"
	check 1 "$bad" analyze "$f"
	check 1 "$bad" profile "$f"
	check 1 "$bad" compare "$f" "$D/ok.btape"
	check 1 "$bad" compare "$D/ok.btape" "$f"
	check 1 "$bad" convert "$f" "$D/o.csv"
	check 1 "$bad" replay "$f" --target "$D/t.img"
done
check 1 missing convert --from blkparse "$D/missing.txt" "$D/o.btape"
for bad in cut junk; do
	f=$D/$bad.btape
	check 2 "$bad" info "$f"
	check 2 "$bad" dump "$f"
	check 2 "$bad" analyze "$f"
	check 2 "$bad" profile "$f"
	check 2 "$bad" compare "$f" "$D/ok.btape"
	check 2 "$bad" convert "$f" "$D/o.csv"
	check 2 "$bad" replay "$f" --target "$D/t.img"
done
check 2 "no such device" analyze --device nosuchdev "$D/ok.btape"
[ ! -e "$D/t.img" ] || fail "a replay target was made"
pass
