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
# every command that reads FILE: exit WANT
each_command() {
	local want=$1 what=$2 f=$D/$2.btape
	check "$want" "$what" info "$f"
	check "$want" "$what" dump "$f"
	check "$want" "$what" analyze "$f"
	check "$want" "$what" profile "$f"
	check "$want" "$what" compare "$f" "$D/ok.btape"
	check "$want" "$what" compare "$D/ok.btape" "$f"
	check "$want" "$what" convert "$f" "$D/o.csv"
	check "$want" "$what" convert --merge "$f" "$D/ok.btape" "$D/o.btape"
	check "$want" "$what" replay "$f" --target "$D/t.img"
}
each_command 1 missing
each_command 1 dir
check 1 missing convert --from blkparse "$D/missing.txt" "$D/o.btape"
each_command 2 cut
each_command 2 junk
check 2 "no such device" analyze --device nosuchdev "$D/ok.btape"
[ ! -e "$D/t.img" ] || fail "a replay target was made"
pass
