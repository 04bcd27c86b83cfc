#!/usr/bin/env bash
# Cluster --scale on one shared target (mpirun -n 3 on this host): the copies are numbered over
# the cluster as one host numbers them, and under the shard layout copy k of N gets region k of
# N whichever rank runs it. Checks, from the result traces (-o, the offsets issued):
#  - the union of the ranks' I/Os is exactly a single-host `--scale 5` replay's (offset, size,
#    op, as a multiset): the same copies in the same regions;
#  - each rank's I/Os lie in its own copies' regions only (rank 0: copies 0-1, rank 1: 2-3,
#    rank 2: 4), so no two ranks touch the same bytes;
#  - one rank (mpirun -n 1) places its copies as the single host does.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
. "${BIOTAPE_SRC:?}/tests/cluster/mpi.sh" || exit 1
command -v python3 >/dev/null || skip "needs python3"
mpi_require
GEN=${BIOTAPE_BIN_DIR:-$(dirname "$BIOTAPE")}/gen_trace
[ -x "$GEN" ] || skip "no trace generator at $GEN"
D=$(t_tmpdir) || exit 1
"$GEN" -o "$D/t.btape" -n 2000 -r 20000 -p randread -S $((4 << 20)) -x 3 || fail "gen"
truncate -s 20M "$D/tgt" || fail "truncate"
args=(replay "$D/t.btape" --target "$D/tgt" --scale 5 --timing afap --no-progress)
"$BIOTAPE" "${args[@]}" -o "$D/single.btape" >/dev/null || fail "single-host replay"
timeout 120 "${MPIRUN[@]}" -n 3 "$BIOTAPE" "${args[@]}" -o "$D/res-%r.btape" >"$D/c.out" \
	2>"$D/c.err" || fail "cluster replay: $(tail -5 "$D/c.err")"
timeout 120 "${MPIRUN[@]}" -n 1 "$BIOTAPE" "${args[@]}" -o "$D/one.btape" >/dev/null \
	2>"$D/one.err" || fail "one-rank replay: $(tail -5 "$D/one.err")"
for f in single one res-0 res-1 res-2; do
	"$BIOTAPE" dump --csv "$D/$f.btape" >"$D/$f.csv" || fail "dump $f"
done
python3 - "$D" <<'PY' || fail "shared target checks"
import collections, sys
D = sys.argv[1]
REGION = (20 << 20) // 5
def ios(name):
    out = []
    for line in open(f"{D}/{name}.csv").read().splitlines()[1:]:
        x = line.split(",")
        out.append((int(x[4]) * 512, int(x[5]), x[6]))
    return out
single = ios("single")
assert len(single) == 5 * 2000, f"single host: {len(single)} I/Os"
ranks = [ios(f"res-{r}") for r in range(3)]
union = collections.Counter(io for r in ranks for io in r)
assert union == collections.Counter(single), "the ranks' I/Os are not the single host's copies"
want = {0: {0, 1}, 1: {2, 3}, 2: {4}}
for r, rio in enumerate(ranks):
    got = {off // REGION for off, n, _ in rio}
    assert got == want[r], f"rank {r} wrote regions {sorted(got)}, want {sorted(want[r])}"
    assert all((off + n - 1) // REGION == off // REGION for off, n, _ in rio), f"rank {r} crosses a region"
assert collections.Counter(ios("one")) == collections.Counter(single), "one rank differs from one host"
print(f"shared target: 3 ranks, regions {want}, union == single host ({len(single)} I/Os)")
PY
pass
