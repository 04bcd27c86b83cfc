# Shared by the MPI tests (source after tests/lib.sh): mpi_require checks that MPI is built and
# mpirun exists (skip otherwise) and sets MPIRUN, the launcher command for several ranks on
# this one host. Open MPI's shared-memory files (vader_segment.*, 4 MiB each, one per rank) go
# to a directory of the test's own under T_ROOT, removed at exit: a rank killed with SIGKILL
# (or the whole job) leaves none in /dev/shm.
mpi_require() {
	local plugin=${BIOTAPE_BIN_DIR:-$(dirname "$BIOTAPE")}/../lib/biotape/biotape-mpi.so
	[ -e "$plugin" ] || skip "MPI not built (BIOTAPE_MPI=OFF or no libopenmpi-dev): no $plugin"
	command -v mpirun >/dev/null || skip "needs mpirun (openmpi-bin)"
	MPI_SHM=$(mktemp -d "$T_ROOT/ompi.XXXXXX") || fail "mktemp"
	export OMPI_MCA_btl_vader_backing_directory=$MPI_SHM
	MPIRUN=(mpirun --oversubscribe)
	[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
	# Under AddressSanitizer: Open MPI leaks what its components allocate and unloads them in
	# MPI_Finalize, so LeakSanitizer reports frames of no module that a suppression could name.
	# The ranks run without leak detection; the same code's one-rank paths keep it elsewhere.
	[ -n "${ASAN_OPTIONS:-}" ] && export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"
	return 0
}
