#!/usr/bin/env bash
# Every rank of a cluster replay or record runs the same build (common/cluster.c,
# cl_comm__same_build()): the ranks send rank 0 their stats and fidelity structs (replay) and
# summary rows (record) as they lie in memory, so a replay rank of another build (a field
# added: past_depth shifted rp_stats) used to be merged field by field from the wrong offsets,
# and the cluster's report came out wrong with exit 0. A rank whose stamp differs
# (BIOTAPE_TEST_BUILD_ID stands in for another build here, as an MPMD launch gives one rank)
# is refused before any work: one line from rank 0 naming it, every rank non-zero, no result
# written. With the same stamp on every rank the same launch replays.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
. "${BIOTAPE_SRC:?}/tests/cluster/mpi.sh" || exit 1
mpi_require
t_gen
D=$(t_tmpdir) || exit 1
"$GEN" -o "$D/t.btape" -n 200 -S $((1 << 20)) || fail "gen"
truncate -s 1M "$D/tgt"
args=(replay "$D/t.btape" --target "$D/tgt" --engine null --timing afap --no-progress
	-o "$D/out-%r.btape")

# launch ID0 ID1: rank 0 and rank 1 with these stamps (MPMD: one app context each)
launch() {
	timeout -s KILL 60 "${MPIRUN[@]}" -n 1 -x BIOTAPE_TEST_BUILD_ID="$1" "$BIOTAPE" "${args[@]}" \
		: -n 1 -x BIOTAPE_TEST_BUILD_ID="$2" "$BIOTAPE" "${args[@]}" >"$D/log" 2>&1
}
rc=0
launch 0 1 || rc=$?
[ $rc != 0 ] || fail "another build's rank: exit 0: $(cat "$D/log")"
want="rank 1 (host $(hostname)) runs another build of biotape $("$BIOTAPE" --version | awk '{print $2}') than rank 0: every rank must run the same build"
grep -qF "$want" "$D/log" || fail "want '$want': $(cat "$D/log")"
[ "$(grep -c "runs another build" "$D/log")" = 1 ] || fail "want one line, from rank 0: $(cat "$D/log")"
[ -z "$(ls "$D" | grep '^out')" ] || fail "wrote $(ls "$D" | grep '^out')"

# record: refused the same way before anything else (no root needed: it never gets to load)
args=(record -o "$D/out-%r.btape" --duration 1s)
rc=0
launch 0 1 || rc=$?
[ $rc != 0 ] || fail "record, another build's rank: exit 0: $(cat "$D/log")"
grep -qF "record: ${want}" "$D/log" || fail "record: want '$want': $(cat "$D/log")"
[ "$(grep -c "runs another build" "$D/log")" = 1 ] || fail "record: want one line: $(cat "$D/log")"
[ -z "$(ls "$D" | grep '^out')" ] || fail "record wrote $(ls "$D" | grep '^out')"

args=(replay "$D/t.btape" --target "$D/tgt" --engine null --timing afap --no-progress
	-o "$D/out-%r.btape")
launch 7 7 || fail "the same build on both ranks: $(cat "$D/log")"
[ -s "$D/out-0.btape" ] && [ -s "$D/out-1.btape" ] || fail "same build: $(ls "$D")"
pass
