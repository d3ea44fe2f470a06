#!/usr/bin/env bash
# mpi-ci.sh: the checks of data-parallel training over MPI (package dist
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
# Usage: scripts/mpi-ci.sh   (about a minute once Open MPI is installed)
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v mpirun >/dev/null || ! pkg-config --exists mpi 2>/dev/null; then
	echo "installing Open MPI (apt-get install libopenmpi-dev openmpi-bin)"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq libopenmpi-dev openmpi-bin pkg-config >/dev/null
fi

go vet -tags mpi ./dist/ ./cmd/train/
go test -tags mpi -count=1 -run 'MPI|Dist' ./dist/ ./cmd/train/
