#!/usr/bin/env bash
# Two ranks on one host never write one output file (docs/SAFETY.md, section 1): under
# mpirun -n 2, "replay -o res.btape" and "record -o rec.btape" (no %r) used to have both ranks
# write the same path: replay exited 0 with one rank's result renamed over the other's, record
# exited 0 with a trace both ranks had written in place ("DAMAGED: footer does not match the
# frames"). Both are refused before any work now, every rank saying why, nothing written; with
# %r each rank writes its own. No root needed: the replay is a null-engine one onto a file,
# and record refuses before it loads anything.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
. "${BIOTAPE_SRC:?}/tests/cluster/mpi.sh" || exit 1
mpi_require
t_gen
D=$(t_tmpdir) || exit 1
"$GEN" -o "$D/t.btape" -n 200 -S $((1 << 20)) || fail "gen"
truncate -s 1M "$D/tgt"

# refused WHAT CMD...: exit non-zero, each rank's line naming the clash, nothing at $D/out*
refused() {
	local what=$1 rc=0
	shift
	timeout -s KILL 60 "${MPIRUN[@]}" -n 2 "$BIOTAPE" "$@" >"$D/log" 2>&1 || rc=$?
	[ $rc != 0 ] || fail "$what: exit 0: $(cat "$D/log")"
	[ "$(grep -c "ranks 0 and 1 on one host would write the same file (put %r in it)" \
		"$D/log")" = 2 ] || fail "$what: want the refusal from both ranks: $(cat "$D/log")"
	[ -z "$(ls "$D" | grep '^out')" ] || fail "$what: wrote $(ls "$D" | grep '^out')"
}
refused "replay -o" replay "$D/t.btape" --target "$D/tgt" --engine null --timing afap \
	--no-progress -o "$D/out.btape"
refused "record -o" record -o "$D/out.btape" --duration 1s

# %r: each its own file (and %h alone is two ranks of one host, refused)
refused "replay -o %h" replay "$D/t.btape" --target "$D/tgt" --engine null --timing afap \
	--no-progress -o "$D/out-%h.btape"
timeout -s KILL 60 "${MPIRUN[@]}" -n 2 "$BIOTAPE" replay "$D/t.btape" --target "$D/tgt" \
	--engine null --timing afap --no-progress -o "$D/out-%r.btape" >"$D/log" 2>&1 ||
	fail "replay -o with %r: $(cat "$D/log")"
[ -s "$D/out-0.btape" ] && [ -s "$D/out-1.btape" ] || fail "replay -o with %r: $(ls "$D")"
# another rank's trace is an input too: under mpirun -n 2, "replay t1.btape t0.btape -o t%r.btape"
# had each rank replace the other's trace with its result, and "--target w%r.btape --write"
# had each rank write over the other's trace; each rank is refused now, the traces unchanged
cp "$D/t.btape" "$D/t0.btape"
cp "$D/t.btape" "$D/t1.btape"
sum=$(md5sum <"$D/t.btape")
"$GEN" -o "$D/w0.btape" -n 200 -p randwrite -S $((1 << 20)) || fail "gen w"
cp "$D/w0.btape" "$D/w1.btape"
wsum=$(md5sum <"$D/w0.btape")
# crossed WANT CMD...: exit non-zero, WANT said, the four traces as they were
crossed() {
	local want=$1 rc=0
	shift
	timeout -s KILL 60 "${MPIRUN[@]}" -n 2 "$BIOTAPE" "$@" >"$D/log" 2>&1 || rc=$?
	[ $rc != 0 ] || fail "$*: exit 0: $(cat "$D/log")"
	grep -q "$want" "$D/log" || fail "$*: want '$want': $(cat "$D/log")"
	for f in t0 t1; do
		[ "$(md5sum <"$D/$f.btape")" = "$sum" ] || fail "$*: $f.btape was changed"
	done
	for f in w0 w1; do
		[ "$(md5sum <"$D/$f.btape")" = "$wsum" ] || fail "$*: $f.btape was changed"
	done
}
crossed "is both input and output" replay "$D/t1.btape" "$D/t0.btape" --target "$D/tgt" \
	--engine null --timing afap --no-progress -o "$D/t%r.btape"
crossed "or another rank's trace" replay "$D/w1.btape" "$D/w0.btape" --target "$D/w%r.btape" \
	--write --fit wrap --no-progress
# another rank's result file is never a target: rank 0's target x01 is rank 1's -o (x0%r);
# the replay would write into the file the other rank then replaces with its result
head -c $((1 << 20)) /dev/zero >"$D/x01"
cp "$D/x01" "$D/x11"
crossed "or another rank's trace or result file" replay "$D/w0.btape" --target "$D/x%r1" \
	--write --fit wrap --no-progress -o "$D/x0%r"
cmp -s "$D/x01" "$D/x11" || fail "x01, rank 1's result and rank 0's target, was changed"
[ ! -e "$D/x00" ] || fail "a result was written by a refused run"
# MPMD (one app context per rank, each with its own arguments): each rank checks the files the
# others really use, not its own patterns expanded for them. Rank 1's target is rank 0's trace,
# then rank 0's result file (the old code let both through: it expanded rank 1's own trace and
# -o patterns for rank 0, and wrote over the trace rank 0 read)
mpmd() { # WANT (0: must pass) -- RANK0 ARGS -- RANK1 ARGS
	local want=$1 rc=0 a=() b=()
	shift 2
	while [ "$1" != -- ]; do a+=("$1"); shift; done
	shift
	b=("$@")
	timeout -s KILL 60 "${MPIRUN[@]}" -n 1 "$BIOTAPE" replay "${a[@]}" --no-progress \
		: -n 1 "$BIOTAPE" replay "${b[@]}" --no-progress >"$D/log" 2>&1 || rc=$?
	if [ "$want" = 0 ]; then
		[ $rc = 0 ] || fail "MPMD ${a[*]} : ${b[*]}: exit $rc: $(cat "$D/log")"
		return
	fi
	[ $rc != 0 ] || fail "MPMD ${a[*]} : ${b[*]}: exit 0: $(cat "$D/log")"
	grep -q "$want" "$D/log" || fail "MPMD: want '$want': $(cat "$D/log")"
}
"$GEN" -o "$D/v0.btape" -n 20000 -p randwrite -S $((1 << 20)) || fail "gen v0" # past 4 KiB
vsum=$(md5sum <"$D/v0.btape")
mpmd "or another rank's trace" -- "$D/v0.btape" --target "$D/tgt" --engine null --write \
	-- "$D/w1.btape" --target "$D/v0.btape" --write --fit wrap
[ "$(md5sum <"$D/v0.btape")" = "$vsum" ] || fail "MPMD: v0.btape, rank 0's trace, was changed"
cp "$D/x01" "$D/r0"
mpmd "or another rank's trace or result file" -- "$D/t.btape" --target "$D/tgt" --engine null \
	--timing afap -o "$D/r%r" -- "$D/w1.btape" --target "$D/r0" --write --fit wrap -o "$D/s%r"
cmp -s "$D/x01" "$D/r0" || fail "MPMD: r0, rank 0's result and rank 1's target, was changed"
# distinct result files without %r are no clash (the old code expanded each rank's own name
# for the other, and refused both)
mpmd 0 -- "$D/t.btape" --target "$D/tgt" --engine null --timing afap -o "$D/a.btape" \
	-- "$D/t.btape" --target "$D/tgt" --engine null --timing afap -o "$D/b.btape"
[ -s "$D/a.btape" ] && [ -s "$D/b.btape" ] || fail "MPMD -o a / -o b: $(ls "$D")"
# ranks in different working directories: one relative name is two files, and a relative and
# an absolute name of one file are one (each rank's is made absolute before the exchange)
mkdir -p "$D/d0" "$D/d1"
timeout -s KILL 60 "${MPIRUN[@]}" -n 1 -wdir "$D/d0" "$BIOTAPE" replay "$D/t.btape" --target "$D/tgt" \
	--engine null --timing afap --no-progress -o out.btape : -n 1 -wdir "$D/d1" "$BIOTAPE" replay \
	"$D/t.btape" --target "$D/tgt" --engine null --timing afap --no-progress -o out.btape \
	>"$D/log" 2>&1 || fail "-o out.btape from two directories: $(cat "$D/log")"
[ -s "$D/d0/out.btape" ] && [ -s "$D/d1/out.btape" ] || fail "two directories: $(ls -R "$D")"
cp "$D/x01" "$D/d0/r.img"
rc=0
timeout -s KILL 60 "${MPIRUN[@]}" -n 1 -wdir "$D/d0" "$BIOTAPE" replay "$D/t.btape" --target "$D/tgt" \
	--engine null --timing afap --no-progress -o r.img : -n 1 -wdir "$D" "$BIOTAPE" replay \
	"$D/w1.btape" --target d0/r.img --write --fit wrap --no-progress >"$D/log" 2>&1 || rc=$?
[ $rc != 0 ] || fail "rank 1's target d0/r.img, rank 0's -o r.img in d0: exit 0: $(cat "$D/log")"
grep -q "or another rank's trace or result file" "$D/log" || fail "d0/r.img: $(cat "$D/log")"
cmp -s "$D/x01" "$D/d0/r.img" || fail "d0/r.img, rank 0's result and rank 1's target, was changed"
# record compares the files the ranks name too: one relative -o in two directories is two
# files (a7c42ea refused it: each rank expanded its own pattern for the other), so the ranks
# go on to their next check (here a device that does not exist); one file named two ways,
# absolute and relative, is refused by both
rc=0
timeout -s KILL 60 "${MPIRUN[@]}" -n 1 -wdir "$D/d0" "$BIOTAPE" record -d /nonexistent -o rec.btape \
	--duration 1s : -n 1 -wdir "$D/d1" "$BIOTAPE" record -d /nonexistent -o rec.btape \
	--duration 1s >"$D/log" 2>&1 || rc=$?
[ $rc != 0 ] && ! grep -q "would write the same file" "$D/log" && grep -q nonexistent "$D/log" ||
	fail "record -o rec.btape from two directories: $rc $(cat "$D/log")"
rc=0
timeout -s KILL 60 "${MPIRUN[@]}" -n 1 "$BIOTAPE" record -o "$D/d0/s1.btape" --duration 1s \
	: -n 1 -wdir "$D/d0" "$BIOTAPE" record -o s%r.btape --duration 1s >"$D/log" 2>&1 || rc=$?
[ $rc != 0 ] && [ "$(grep -c "ranks 0 and 1 on one host would write the same file" "$D/log")" = 2 ] ||
	fail "record: s1.btape named two ways: want both ranks' refusal: $(cat "$D/log")"
[ ! -e "$D/d0/s1.btape" ] || fail "record wrote s1.btape"
# standard output is no file of its own: the ranks' streams would meet in the launcher's
rc=0
timeout -s KILL 60 "${MPIRUN[@]}" -n 2 "$BIOTAPE" record -o - --duration 1s >"$D/log" 2>&1 || rc=$?
[ $rc != 0 ] && [ "$(grep -c "cannot share standard output" "$D/log")" = 2 ] ||
	fail "record -o - under mpirun -n 2: $rc $(head -c 600 "$D/log")"
# ranks of two hosts (BIOTAPE_TEST_HOST gives each its own name) with one -o file: one
# directory is a filesystem both hosts share, and the last rank to finish used to rename its
# file over the other's (exit 0); both refused now, nothing written, no marker left behind.
# The same relative name in two directories (each host's own filesystem) and %h go on.
hosts() { # DIR0 DIR1 ARGS...: rank 0 as host hA in DIR0, rank 1 as host hB in DIR1
	local d0=$1 d1=$2
	shift 2
	timeout -s KILL 60 "${MPIRUN[@]}" -n 1 -x BIOTAPE_TEST_HOST=hA -wdir "$d0" "$BIOTAPE" "$@" \
		: -n 1 -x BIOTAPE_TEST_HOST=hB -wdir "$d1" "$BIOTAPE" "$@" >"$D/log" 2>&1
}
mkdir -p "$D/nfs" "$D/h0" "$D/h1"
for cmd in "replay $D/t.btape --target $D/tgt --engine null --timing afap --no-progress" \
	"record --duration 1s"; do
	rc=0
	hosts "$D/nfs" "$D/nfs" $cmd -o out.btape || rc=$?
	[ $rc != 0 ] && grep -q "rank 0 (host hA) writes this file too: a filesystem the hosts share" \
		"$D/log" && grep -q "rank 1 (host hB) writes this file too" "$D/log" ||
		fail "${cmd%% *} -o out.btape on a shared directory: $rc $(cat "$D/log")"
	[ -z "$(ls -A "$D/nfs")" ] || fail "${cmd%% *} on a shared directory left $(ls -A "$D/nfs")"
done
# one directory reached by two names (rank 1 through a symlink): the same file all the same
ln -s nfs "$D/nfs-link"
rc=0
hosts "$D/nfs" "$D/nfs-link" replay "$D/t.btape" --target "$D/tgt" --engine null --timing afap \
	--no-progress -o out.btape || rc=$?
[ $rc != 0 ] && grep -q "writes this file too: a filesystem the hosts share" "$D/log" ||
	fail "replay -o out.btape, one directory by two names: $rc $(cat "$D/log")"
[ -z "$(ls -A "$D/nfs")" ] || fail "one directory by two names: left $(ls -A "$D/nfs")"
# the null device is no file of either host's
hosts "$D/nfs" "$D/nfs" replay "$D/t.btape" --target "$D/tgt" --engine null --timing afap \
	--no-progress -o /dev/null || fail "replay -o /dev/null, two hosts: $(cat "$D/log")"
hosts "$D/h0" "$D/h1" replay "$D/t.btape" --target "$D/tgt" --engine null --timing afap \
	--no-progress -o out.btape || fail "replay -o out.btape, two hosts' own directories: $(cat "$D/log")"
[ -s "$D/h0/out.btape" ] && [ -s "$D/h1/out.btape" ] && [ "$(ls -A "$D/h0" "$D/h1" | grep -c .)" = 4 ] ||
	fail "two hosts' own directories: $(ls -AR "$D/h0" "$D/h1")"
hosts "$D/nfs" "$D/nfs" replay "$D/t.btape" --target "$D/tgt" --engine null --timing afap \
	--no-progress -o out-%h.btape || fail "replay -o out-%h.btape, shared: $(cat "$D/log")"
[ -s "$D/nfs/out-hA.btape" ] && [ -s "$D/nfs/out-hB.btape" ] || fail "%h: $(ls -A "$D/nfs")"
# the null device is a sink every rank may share
timeout -s KILL 60 "${MPIRUN[@]}" -n 2 "$BIOTAPE" replay "$D/t.btape" --target "$D/tgt" \
	--engine null --timing afap --no-progress -o /dev/null >"$D/log" 2>&1 ||
	fail "replay -o /dev/null: $(cat "$D/log")"
pass
