# BIOTAPE_MPI: the MPI plugin of cluster runs (common/cluster_mpi.c -> lib/biotape/biotape-mpi.so).
# biotape itself never links MPI; it dlopens the plugin when an MPI launcher started it
# (common/cluster.c). AUTO builds the plugin when an MPI C library is found.
set(BIOTAPE_HAVE_MPI OFF)
if(NOT BIOTAPE_MPI STREQUAL "OFF")
	find_package(MPI COMPONENTS C QUIET)
	if(MPI_C_FOUND)
		set(BIOTAPE_HAVE_MPI ON)
		message(STATUS "biotape: MPI plugin enabled (${MPI_C_LIBRARIES})")
	elseif(BIOTAPE_MPI STREQUAL "ON")
		message(FATAL_ERROR "BIOTAPE_MPI=ON but no MPI C library found (Debian: libopenmpi-dev)")
	else()
		message(STATUS "biotape: no MPI found, cluster runs disabled")
	endif()
endif()
