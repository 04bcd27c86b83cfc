#!/usr/bin/env bash
# The cluster layer (common/cluster.h) under mpirun -n 3 on this host, with injected clock
# shifts of 0, +3 ms and -7 ms (BIOTAPE_TEST_CLOCK_SHIFT_NS, set per rank with Open MPI's MPMD
# syntax): all-reduce, agree/refuse, offsets within 50 us, start instant. And the one-rank
# path: without a launcher no MPI is loaded; under one without the plugin, a clear refusal.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
. "${BIOTAPE_SRC:?}/tests/cluster/mpi.sh" || exit 1
PROG=${1:?usage: cluster_layer.sh TEST_PROGRAM}
[ -x "$PROG" ] || skip "MPI not built (BIOTAPE_MPI=OFF or no libopenmpi-dev)"
mpi_require
out=$(timeout 120 "${MPIRUN[@]}" -n 1 -x BIOTAPE_TEST_CLOCK_SHIFT_NS=0 "$PROG" 3 : \
	-n 1 -x BIOTAPE_TEST_CLOCK_SHIFT_NS=3000000 "$PROG" 3 : \
	-n 1 -x BIOTAPE_TEST_CLOCK_SHIFT_NS=-7000000 "$PROG" 3 2>&1) || fail "mpirun -n 3: $out"
echo "$out"
grep -q '^PASS: 3 ranks' <<<"$out" || fail "no PASS line from rank 0"

# Under a launcher, a missing plugin is one clear line and a failure, not a lone run.
out=$(BIOTAPE_MPI_PLUGIN=/nonexistent/biotape-mpi.so timeout 60 "${MPIRUN[@]}" -n 1 \
	-x BIOTAPE_MPI_PLUGIN "$PROG" 1 2>&1) && fail "ran without its plugin: $out"
grep -q 'plugin is missing' <<<"$out" || fail "no clear line for the missing plugin: $out"
pass
