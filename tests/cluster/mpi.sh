# Shared by the MPI tests and bench/cluster (source after tests/lib.sh): mpi_require checks
# that MPI is built and mpirun exists (skip otherwise) and sets MPIRUN, the launcher command
# for several ranks on this one host.
mpi_require() {
	local plugin=${BIOTAPE_BIN_DIR:-$(dirname "$BIOTAPE")}/../lib/biotape/biotape-mpi.so
	[ -e "$plugin" ] || skip "MPI not built (BIOTAPE_MPI=OFF or no libopenmpi-dev): no $plugin"
	command -v mpirun >/dev/null || skip "needs mpirun (openmpi-bin)"
	MPIRUN=(mpirun --oversubscribe)
	[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
	return 0
}
