#!/usr/bin/env bash
# kernel_emu.sh: runs every kernel of csrc/ on the CPU, without a GPU, and
# compares it with the CPU backend: gen/ writes random cases (strided and
# broadcast layouts, special values) with the CPU backend's outputs,
# run.cpp compiles csrc/wick.cu with g++ against emu.h (an emulation of the
# builtins: the threads of a block are fibers switched at __syncthreads)
# and checks each kernel's output, with launch grids unlike the GPU's. It catches index, reduction and
# synchronisation mistakes before a GPU is at hand; it cannot catch what
# only hardware shows (memory model, launch limits, the PTX JIT), which the
# -tags cuda tests on a lent device cover. (scripts/cuda_emu.sh runs the
# same kernels behind an emulated driver, for the cuda package's tests.)
#
# Usage: scripts/kernel_emu.sh   (needs g++ with C++20 on x86-64; a few
# seconds)
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go run ./scripts/kernel_emu/gen "$tmp/cases.bin"
g++ -std=c++20 -O1 -ffp-contract=off -w -o "$tmp/run" scripts/kernel_emu/run.cpp
"$tmp/run" "$tmp/cases.bin"
