#!/usr/bin/env bash
# cuda_ci.sh: the CUDA backend's checks on a machine without a GPU (CI, and
# every development machine). Exits non-zero at the first failure.
#
#   1. installs Debian's CUDA toolkit if nvcc, ptxas or cuda.h is missing
#      (non-free component; needs root),
#   2. regenerates csrc/unary_ops.cuh from the unary op table
#      (tensor/unary_ops.go) and the PTX from csrc/, and checks that they
#      equal the committed files,
#   3. go build -tags cuda ./... and go vet -tags cuda ./...,
#   4. compiles the cuda package's test binary (go test -c -tags cuda) and
#      checks with ldd that it links libcuda.so.1 and nothing else from CUDA
#      (cuBLAS is loaded with dlopen at run time: docs/design.md, rule 3),
#   5. go test -tags cuda ./...: the whole module with the GPU backend
#      linked in. Without a GPU the binaries start all the same (cuda/cuinit.c
#      keeps gorgonia.org/cu's init from exiting) and the GPU tests skip;
#      what runs is every CPU test, the cuda package's plain-Go tests (kernel
#      launch planning, the cuBLAS calls of MatMul and attention against a
#      reference sgemm, the allocator's policy, the Philox reference, that
#      cuda.go and stub.go declare the same API), the no-GPU path (every
#      device request fails naming the driver's cuInit error), and
#      cmd/train training on the CPU with --device=cuda failing in one line.
#      (The stub's own test runs in the pure-Go go test ./..., .ci/run.)
#   6. assembles the PTX for sm_90 (H100/H200) with ptxas and prints each
#      kernel's registers, stack and spills,
#   7. runs every kernel on the CPU under emulation against the CPU
#      backend (scripts/kernel_emu.sh: strided, broadcast and special-value
#      cases, row kernels at their GPU block size),
#   8. runs the GPU tests and `train --device cuda` on an emulated device
#      (scripts/cuda_emu.sh: an emulated libcuda.so.1 and cuBLAS that run
#      the kernels on the CPU and check the driver calls).
#
# The emulation cannot show what only hardware does (the PTX JIT, the
# memory model, timing): the GPU tests run on a lent device too,
# scripts/device_check.sh.
#
# Usage: scripts/cuda_ci.sh   (from anywhere; about two minutes once the
# toolkit is installed)
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== cuda_ci: %s\n' "$*"; }
die() { printf 'cuda_ci: FAIL: %s\n' "$*" >&2; exit 1; }

if ! command -v nvcc >/dev/null || ! command -v ptxas >/dev/null || [ ! -f /usr/include/cuda.h ]; then
	step "installing Debian's CUDA toolkit (nvidia-cuda-toolkit, nvidia-cuda-dev)"
	sudo=""
	if [ "$(id -u)" != 0 ]; then
		command -v sudo >/dev/null || die "the CUDA toolkit is missing and installing it needs root"
		sudo=sudo
	fi
	src=/etc/apt/sources.list.d/debian.sources
	if [ -f "$src" ]; then
		$sudo sed -i 's/^Components: main$/Components: main contrib non-free non-free-firmware/' "$src"
	fi
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends nvidia-cuda-toolkit nvidia-cuda-dev >/dev/null
	command -v nvcc >/dev/null && command -v ptxas >/dev/null || die "installing the CUDA toolkit did not provide nvcc and ptxas"
fi
nvcc --version | tail -1

step "csrc/unary_ops.cuh and cuda/kernels.ptx are current"
(cd cuda && go run gen.go -check) || die "csrc/unary_ops.cuh or cuda/kernels.ptx differs from what tensor/unary_ops.go and csrc/ generate: run 'go generate ./cuda' and commit them"

step "go build -tags cuda ./..."
go build -tags cuda ./... || die "go build -tags cuda"

step "go vet -tags cuda ./..."
go vet -tags cuda ./... || die "go vet -tags cuda"

step "go test -c -tags cuda ./cuda/ and its libraries"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -c -tags cuda -o "$tmp/cuda.test" ./cuda/ || die "compiling the cuda test binary"
ldd "$tmp/cuda.test" | tee "$tmp/ldd"
grep -q 'libcuda\.so\.1' "$tmp/ldd" || die "the -tags cuda test binary does not link libcuda.so.1"
if grep -v 'libcuda\.so\.1' "$tmp/ldd" | grep -Ei 'libcu|libnv|cudart|cublas|curand|cufft|cusparse|cusolver|cudnn|nccl'; then
	die "the -tags cuda test binary links CUDA libraries other than libcuda.so.1 (they must be loaded with dlopen)"
fi

step "go test -tags cuda ./... (GPU tests skip without a GPU)"
go test -count=1 -tags cuda ./... || die "go test -tags cuda ./..."

step "ptxas -arch=sm_90 cuda/kernels.ptx"
ptxas -arch=sm_90 -v cuda/kernels.ptx -o "$tmp/kernels.cubin" 2>"$tmp/ptxas" || { cat "$tmp/ptxas"; die "ptxas rejected the PTX"; }
# one line per kernel: name, registers, stack frame, spill stores/loads
awk '
	/Compiling entry function/ { entry = $0; sub(/.*function ./, "", entry); sub(/. for .*/, "", entry) }
	/Function properties for/ { prop = $NF }
	/bytes stack frame/ && prop == entry { stack = $1; spills = $5; loads = $9 }
	/Used [0-9]+ registers/ && entry != "" {
		regs = $0; sub(/.*Used /, "", regs); sub(/ registers.*/, "", regs)
		smem = "0"; if (match($0, /[0-9]+ bytes smem/)) { smem = substr($0, RSTART, RLENGTH); sub(/ .*/, "", smem) }
		printf "  %-30s %3s registers %3s B stack %5s B smem  spills: %s B stored, %s B loaded\n", entry, regs, stack, smem, spills, loads
		if (spills + 0 > 0 || loads + 0 > 0) spilled++
		entry = ""
	}
	END { if (spilled) printf "cuda_ci: note: %d kernels spill registers\n", spilled; else print "  no kernel spills registers" }
' "$tmp/ptxas"
grep -qi 'error' "$tmp/ptxas" && { cat "$tmp/ptxas"; die "ptxas reported errors"; }

step "kernels under CPU emulation (scripts/kernel_emu.sh)"
scripts/kernel_emu.sh || die "a kernel differs from the CPU backend under emulation"

step "GPU tests and train --device cuda on an emulated device (scripts/cuda_emu.sh)"
scripts/cuda_emu.sh || die "the GPU tests failed on the emulated device"

printf '\ncuda_ci: OK\n'
