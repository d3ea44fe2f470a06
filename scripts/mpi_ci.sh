#!/usr/bin/env bash
# mpi_ci.sh: the checks of data-parallel training over MPI (package dist
# and cmd/train built with -tags mpi). Exits non-zero at the first failure.
#
#   1. installs Debian's Open MPI (libopenmpi-dev, openmpi-bin) when mpirun
#      or pkg-config's "mpi" package is missing (needs root),
#   2. go vet -tags mpi on the packages with MPI code,
#   3. the tests that start ranks with mpirun --allow-run-as-root
#      --oversubscribe -np 2 on this machine's loopback: the collectives on
#      sizes 0, 1, 7 and 1e6, DataParallel against one process, a rank that
#      dies and a rank that stalls (dist); 2 ranks against 1 on the same
#      samples, checkpoints moving between world sizes, SIGKILL of a rank
#      and mismatched configurations (cmd/train).
#
# With -mpich it runs the same tests against MPICH instead (installing
# libmpich-dev and mpich when missing): built with CC=mpicc.mpich and
# -tags mpi,mpicc, launched by MPICH's mpirun.
#
# Usage: scripts/mpi_ci.sh [-mpich]   (about a minute once MPI is installed)
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" = "-mpich" ]; then
	if ! command -v mpicc.mpich >/dev/null || ! command -v mpirun.mpich >/dev/null; then
		echo "installing MPICH (apt-get install libmpich-dev mpich)"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq
		apt-get install -y -qq libmpich-dev mpich >/dev/null
	fi
	bin=$(mktemp -d)
	trap 'rm -rf "$bin"' EXIT
	# the tests call "mpirun": MPICH's, through a script (hydra finds its
	# proxy next to its real path)
	printf '#!/bin/sh\nexec %s "$@"\n' "$(command -v mpirun.mpich)" >"$bin/mpirun"
	chmod +x "$bin/mpirun"
	export PATH="$bin:$PATH" CC=mpicc.mpich
	go vet -tags mpi,mpicc ./dist/ ./cmd/train/
	go test -tags mpi,mpicc -count=1 -run 'MPI|Dist' ./dist/ ./cmd/train/
	exit 0
fi

if ! command -v mpirun >/dev/null || ! pkg-config --exists mpi 2>/dev/null; then
	echo "installing Open MPI (apt-get install libopenmpi-dev openmpi-bin)"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq libopenmpi-dev openmpi-bin pkg-config >/dev/null
fi

go vet -tags mpi ./dist/ ./cmd/train/
go test -tags mpi -count=1 -run 'MPI|Dist' ./dist/ ./cmd/train/
