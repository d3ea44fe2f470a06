#!/usr/bin/env bash
# device_check.sh: prepares the GPU checks for a lent device and prints the
# one `run` call that executes them there.
#
# The device machine has the NVIDIA driver, CUDA 13 and PyTorch but no Go,
# so everything is built here into .gpu/ (git-ignored), stripped and
# gzipped to fit the 64 MiB carry limit:
#
#   .gpu/<pkg>.test.gz   go test -c -tags cuda, one per package with tests
#   .gpu/gpubench.gz     go build -tags cuda ./cmd/gpubench
#   .gpu/manifest        "<binary name> <package dir> <links the GPU backend>"
#
# On the device, scripts/device_run.sh (carried with the working tree)
# unpacks them, runs every test binary in its package directory and prints
# a table of pass/fail per package (with the Llama family's fused kernels
# and `train --init_from=DIR --device cuda` on Llama and Qwen3 hub models
# listed by name: cmd/train's TestFineTuneLlamaCUDA, and LoRA training on
# cuda against cpu: cmd/train's TestLoRACUDA; and the bfloat16 and float16
# kernels: casts, cublasGemmEx products, elementwise kernels, 16-bit
# tensors against the CPU and PyTorch's 16-bit goldens; autocast and
# train --dtype=bfloat16/float16 on cuda against cpu), then times cmd/gpubench next to its
# PyTorch twin scripts/gpubench_peer.py (baby GPT and GPT-2-124M shapes,
# tokens/s and the ratio).
#
# Usage: scripts/device_check.sh, then make the printed `run` call.
set -euo pipefail
cd "$(dirname "$0")/.."

rm -rf .gpu
mkdir -p .gpu
flags=(-tags cuda -ldflags "-s -w")
go list -tags cuda -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}} {{.Dir}}{{end}}' ./... |
	while read -r pkg dir; do
		rel=${dir#"$PWD"}
		rel=${rel#/}
		name=$(printf '%s' "${rel:-root}" | tr / _)
		echo "building $name.test ($pkg)"
		go test -c "${flags[@]}" -o ".gpu/$name.test" "$pkg"
		# does the test binary include the GPU backend (or only CPU code)?
		gpu=no
		if go list -tags cuda -test -deps "$pkg" | grep -qx 'github.com/wickml/wick/cuda'; then
			gpu=yes
		fi
		echo "$name ${rel:-.} $gpu" >>.gpu/manifest
	done
echo "building gpubench"
go build "${flags[@]}" -o .gpu/gpubench ./cmd/gpubench

# rule 3: the binaries link the driver and nothing else from CUDA
for b in .gpu/*.test .gpu/gpubench; do
	if ldd "$b" 2>/dev/null | grep -v 'libcuda\.so\.1' | grep -Ei 'libcu|libnv|cudart|cublas|cudnn|nccl'; then
		echo "device_check: $b links CUDA libraries other than libcuda.so.1" >&2
		exit 1
	fi
done
gzip -9 .gpu/*.test .gpu/gpubench
du -sh .gpu
size=$(du -sm .gpu | cut -f1)
if [ "$size" -ge 60 ]; then
	echo "device_check: .gpu is ${size} MiB, too close to the 64 MiB carry limit" >&2
	exit 1
fi

cat <<'EOF'

Built .gpu/. With a lent device, make this one call (about 5-8 minutes:
the tests with WICK_REQUIRE_GPU=1, the flaky-prone ones 20 times,
compute-sanitizer memcheck and racecheck, then gpubench and PyTorch):

  run(command="bash scripts/device_run.sh", carry=[".gpu"], timeout_s=540)

then give_back. It prints the device and the cuBLAS loaded, a pass/fail
table per package, the tails of failing logs, the repeated runs, the
sanitizers' summaries, gpubench's roofline prediction next to its
measurement and PyTorch's, and ClipGradNorm alone; full logs come back
under $OUT. A second, shorter try: EXTRA=0 skips the repeats and the
sanitizers, BENCH=0 the benchmarks. To find which kernel faults, rerun one
package with WICK_CUDA_SYNC=1 (every launch waits and checks), e.g.

  run(command="WICK_CUDA_SYNC=1 ONLY=cuda BENCH=0 EXTRA=0 bash scripts/device_run.sh", carry=[".gpu"], timeout_s=300)
EOF
