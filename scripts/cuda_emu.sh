#!/usr/bin/env bash
# cuda_emu.sh: runs the -tags cuda tests, and `train --device cuda`, on an
# emulated GPU, on a machine without one. It builds
#
#   - libcuda.so.1 from scripts/kernel_emu/driver.cpp: the driver API the
#     cuda package uses, with every kernel of csrc/ compiled for the CPU
#     under scripts/kernel_emu/emu.h, plus a stub for every other driver
#     symbol the binaries link (printing its name, failing);
#   - libcublas.so.12 from scripts/kernel_emu/cublas.cpp,
#
# and runs the cuda package's -tags cuda tests with LD_LIBRARY_PATH
# pointing at them: every GPU test must run (a skip fails this script;
# extra arguments go to the test binary, such as -test.run). The blocks
# and threads of every launch run in a random order (WICKEMU_SEED, printed;
# set it to repeat a run), so float atomics add up in a different order
# each time, as on a GPU. It also runs TestNoGPU with the emulated driver
# reporting no device (the WICK_REQUIRE_GPU switch included), checks that a
# cuInit re-entered from inside the driver's does not hang, and runs the
# concurrent-upload test under -race. It replays
# PyTorch's golden cases on the emulated GPU (tensor's TestGoldenCUDA:
# every op of the tensor surface, forward and backward; TestGolden16CUDA:
# the same in bfloat16 and float16 against PyTorch's 16-bit results). Then it trains
# a small model with `train --device cuda` and with `--device cpu` (10
# steps, 5 more resumed from the checkpoint, a sample) and checks that the
# losses agree, and fine-tunes random Llama and Qwen3 hub models with
# `train --init_from=DIR --device cuda` against `--device cpu` (cmd/train's
# TestFineTuneLlamaCUDA: the fused RMSNorm, rotary, SwiGLU and
# grouped-query attention kernels end to end), LoRA adapters trained
# on cuda against cpu (cmd/train's TestLoRACUDA), and 16-bit autocast:
# tensor's TestAutocastCUDA and TestAutocastCastsParameterOnceCUDA, and
# `train --dtype=bfloat16` and `--dtype=float16` (loss scaling, resumed)
# on cuda (cmd/train's TestTrain16CUDA).
#
# What the emulation checks: the Go side's driver and cuBLAS calls (context
# current on the calling thread, launch shapes, argument counts and sizes
# against the PTX, copies inside allocations, sgemm arguments as cuBLAS
# validates them), every kernel's results against the CPU backend with
# out-of-bounds writes caught by guard zones, and the backend's logic end to
# end. What it cannot check: the PTX JIT and the hardware (the memory model,
# real concurrency between the stream and the host, timing): those need a
# lent device (scripts/device_check.sh).
#
# Usage: scripts/cuda_emu.sh [test binary flags]   (CUDA_EMU_KEEP=1 keeps
# its work directory; needs cuda.h and g++: scripts/cuda_ci.sh installs the
# toolkit and runs this; about a minute on two cores)
set -euo pipefail
cd "$(dirname "$0")/.."

die() { printf 'cuda_emu: FAIL: %s\n' "$*" >&2; exit 1; }
[ -f /usr/include/cuda.h ] || die "cuda.h is missing: run scripts/cuda_ci.sh, which installs Debian's CUDA toolkit"

tmp=$(mktemp -d)
if [ "${CUDA_EMU_KEEP:-0}" = 1 ]; then
	echo "cuda_emu: keeping the libraries, binaries and logs in $tmp"
else
	trap 'rm -rf "$tmp"' EXIT
fi
# shellcheck source=scripts/kernel_emu/build_driver.sh
. scripts/kernel_emu/build_driver.sh

echo "== cuda_emu: building the test binaries of packages cuda, tensor and cmd/train"
mkdir -p "$tmp/lib"
go test -c -tags cuda -o "$tmp/cuda.test" ./cuda/
go test -c -tags cuda -o "$tmp/tensor.test" ./tensor/
go test -c -tags cuda -o "$tmp/train.test" ./cmd/train/

echo "== cuda_emu: building the emulated driver and cuBLAS"
emu_build_driver "$tmp" "$tmp/cuda.test" "$tmp/tensor.test" "$tmp/train.test"
export LD_LIBRARY_PATH="$tmp/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# blocks and threads run in a random order (float atomics land in a
# different order at every launch, as on a GPU); WICKEMU_SEED repeats a run
export WICKEMU_SEED=${WICKEMU_SEED:-$(( $(date +%s%N) % 4294967291 + 1 ))}
echo "== cuda_emu: thread order seed WICKEMU_SEED=$WICKEMU_SEED"
# (into a file: with pipefail, grep -q quitting early can kill ldd with SIGPIPE)
ldd "$tmp/cuda.test" >"$tmp/ldd.txt"
grep -q "$tmp/lib/libcuda.so.1" "$tmp/ldd.txt" || die "the test binary does not pick up the emulated libcuda.so.1"

echo "== cuda_emu: the cuda package's tests on the emulated GPU"
# Every GPU test must run: a skip fails, except TestNoGPU's (the path
# without a usable GPU, which cuda_ci.sh's go test -tags cuda covers).
start=$(date +%s)
if ! (cd cuda && "$tmp/cuda.test" -test.count=1 -test.v -test.skip '^TestNoGPU$' "$@") >"$tmp/cuda.log" 2>&1; then
	grep -E -- '--- FAIL|^FAIL|panic|emulated|_test.go' "$tmp/cuda.log" | head -60
	die "a GPU test failed on the emulated device (log: CUDA_EMU_KEEP=1)"
fi
grep -E -- '^--- (PASS|SKIP)' "$tmp/cuda.log" | awk '{ printf "  %-5s %-34s %s\n", $2, $3, $4 }'
if grep -q -- '--- SKIP' "$tmp/cuda.log"; then
	grep -A2 -- '--- SKIP' "$tmp/cuda.log" | head -20
	die "a GPU test skipped on the emulated device"
fi
printf '  %d tests passed in %ds\n' "$(grep -c -- '^--- PASS' "$tmp/cuda.log")" $(($(date +%s) - start))

echo "== cuda_emu: the no-GPU path (WICKEMU_NODEVICE=1: cuInit fails with CUDA_ERROR_NO_DEVICE)"
if ! (cd cuda && WICKEMU_NODEVICE=1 "$tmp/cuda.test" -test.count=1 -test.v -test.run '^TestNoGPU$') >"$tmp/nogpu.log" 2>&1 ||
	! grep -q -- '^--- PASS: TestNoGPU' "$tmp/nogpu.log" || ! grep -q -- '--- PASS: TestNoGPU/WICK_REQUIRE_GPU' "$tmp/nogpu.log"; then
	tail -30 "$tmp/nogpu.log"
	die "TestNoGPU (with its WICK_REQUIRE_GPU=1 check) did not pass without a device"
fi
echo "  TestNoGPU passed: every device request fails naming cuInit; WICK_REQUIRE_GPU=1 turns the skips into failures"

echo "== cuda_emu: cuInit re-entered from inside the driver's cuInit (WICKEMU_REENTER_CUINIT=1, as compute-sanitizer may)"
if ! (cd cuda && WICKEMU_REENTER_CUINIT=1 timeout 60 "$tmp/cuda.test" -test.count=1 -test.v -test.run '^(TestCuInitInterposed|TestBackend)$/^Unary$') >"$tmp/reenter.log" 2>&1 ||
	! grep -q -- '^--- PASS: TestCuInitInterposed' "$tmp/reenter.log"; then
	tail -20 "$tmp/reenter.log"
	die "the interposed cuInit hung or failed when re-entered (exit status 124: timed out)"
fi
echo "  the nested cuInit went straight to the driver"

echo "== cuda_emu: uploads from several goroutines through the shared staging buffers, under -race"
CGO_ENABLED=1 go test -race -c -tags cuda -o "$tmp/cuda-race.test" ./cuda/
if ! (cd cuda && "$tmp/cuda-race.test" -test.count=1 -test.v -test.run '^TestUploadConcurrent$') >"$tmp/race.log" 2>&1 ||
	! grep -q -- '^--- PASS: TestUploadConcurrent' "$tmp/race.log"; then
	grep -E -A12 -- 'DATA RACE|--- FAIL|panic' "$tmp/race.log" | head -40
	die "TestUploadConcurrent failed under -race"
fi
echo "  TestUploadConcurrent passed under -race"

echo "== cuda_emu: PyTorch's golden values on the emulated GPU (tensor: TestGoldenCUDA)"
if ! (cd tensor && "$tmp/tensor.test" -test.count=1 -test.v -test.run '^(TestGoldenCUDA|TestGolden16CUDA|TestFunctionCUDA|TestAutocastCUDA|TestAutocastCastsParameterOnceCUDA)$') >"$tmp/golden.log" 2>&1; then
	grep -E -A4 -- '--- FAIL|panic' "$tmp/golden.log" | head -60
	die "golden cases failed on the emulated device"
fi
grep -q -- '^--- PASS: TestGoldenCUDA' "$tmp/golden.log" || { tail -5 "$tmp/golden.log"; die "TestGoldenCUDA did not run"; }
printf '  %d golden cases (forward and backward) match PyTorch on the emulated GPU\n' "$(grep -c -- '^    --- PASS: TestGoldenCUDA/' "$tmp/golden.log")"
grep -q -- '^--- PASS: TestGolden16CUDA' "$tmp/golden.log" || { tail -5 "$tmp/golden.log"; die "TestGolden16CUDA did not run"; }
printf '  %d bfloat16 and float16 golden cases (forward and backward) match PyTorch'"'"'s 16-bit results on the emulated GPU\n' "$(grep -c -- '^        --- PASS: TestGolden16CUDA/' "$tmp/golden.log")"
grep -q -- '^--- PASS: TestFunctionCUDA' "$tmp/golden.log" || { tail -5 "$tmp/golden.log"; die "TestFunctionCUDA did not run"; }
echo "  custom tensor.Functions differentiate on the emulated GPU (TestFunctionCUDA)"
for t in TestAutocastCUDA TestAutocastCastsParameterOnceCUDA; do
	grep -q -- "^--- PASS: $t" "$tmp/golden.log" || { tail -5 "$tmp/golden.log"; die "$t did not run"; }
done
echo "  autocast's products on the emulated GPU match the CPU's, each parameter cast once per region (TestAutocastCUDA, TestAutocastCastsParameterOnceCUDA)"

echo "== cuda_emu: train --device cuda against --device cpu"
go build -tags cuda -o "$tmp/train" ./cmd/train
corpus="$tmp/corpus.txt"
for i in $(seq 40); do echo "the quick brown fox jumps over the lazy dog, said the fox to the dog $i times."; done >"$corpus"
args=(--data="$corpus" --n_layer=1 --n_head=2 --n_embd=32 --block_size=16 --batch_size=4
	--eval_interval=5 --eval_iters=2 --log_interval=1 --num_tokens=20 --progress=plain)
for dev in cuda cpu; do
	# 10 steps, then 5 more resumed from the checkpoint, then a sample from it
	{ "$tmp/train" "${args[@]}" --max_iters=10 --device="$dev" --out_dir="$tmp/out-$dev" &&
		"$tmp/train" "${args[@]}" --max_iters=15 --resume --device="$dev" --out_dir="$tmp/out-$dev" &&
		"$tmp/train" sample --out_dir="$tmp/out-$dev" --num_tokens=40 --device="$dev" >"$tmp/sample-$dev.txt"; } >"$tmp/train-$dev.log" 2>&1 ||
		{ cat "$tmp/train-$dev.log"; die "train --device $dev failed"; }
done
grep -q 'parameters on cuda:0' "$tmp/train-cuda.log" || { cat "$tmp/train-cuda.log"; die "train --device cuda did not train on cuda:0"; }
grep -E '^done:' "$tmp/train-cuda.log" | sed 's/^/  cuda: /'
grep -E '^done:' "$tmp/train-cpu.log" | sed 's/^/  cpu:  /'
# every logged loss (training and evaluation) of both runs, side by side
losses() { grep -oE '(loss|val loss) [0-9]+\.[0-9]+' "$1" | awk '{print $NF}'; }
paste <(losses "$tmp/train-cuda.log") <(losses "$tmp/train-cpu.log") >"$tmp/losses"
[ "$(losses "$tmp/train-cuda.log" | wc -l)" = "$(losses "$tmp/train-cpu.log" | wc -l)" ] && [ -s "$tmp/losses" ] ||
	{ cat "$tmp/train-cuda.log"; die "the train logs of the two devices do not have the same loss lines"; }
awk '{ d = $1 - $2; if (d < 0) d = -d; if (d > 1e-3 * $2) { bad++; print "  differ: cuda " $1 ", cpu " $2 } n++ }
	END { printf "  %d logged losses (train, eval, resumed), %d differ by more than 1e-3 relative\n", n, bad; exit bad > 0 }' "$tmp/losses" ||
	die "train --device cuda and --device cpu disagree"
if cmp -s "$tmp/sample-cuda.txt" "$tmp/sample-cpu.txt"; then
	echo "  the samples from the two checkpoints are the same text"
else
	echo "  note: the samples differ (sampling follows the logits, which differ in the last bits)"
fi

echo "== cuda_emu: train --init_from=DIR --device cuda on Llama-family models against --device cpu, LoRA, and 16-bit autocast (cmd/train: TestFineTuneLlamaCUDA, TestLoRACUDA, TestTrain16CUDA)"
if ! (cd cmd/train && "$tmp/train.test" -test.count=1 -test.v -test.run '^(TestFineTuneLlamaCUDA|TestLoRACUDA|TestTrain16CUDA)$') >"$tmp/llama.log" 2>&1 ||
	! grep -q -- '^--- PASS: TestFineTuneLlamaCUDA' "$tmp/llama.log" || ! grep -q -- '^--- PASS: TestLoRACUDA' "$tmp/llama.log" ||
	! grep -q -- '^--- PASS: TestTrain16CUDA' "$tmp/llama.log" ||
	grep -q -- '--- SKIP' "$tmp/llama.log"; then
	grep -E -A6 -- '--- FAIL|--- SKIP|panic|loss [0-9]+:' "$tmp/llama.log" | head -40
	die "fine-tuning a Llama-family model on the emulated GPU failed, skipped or disagrees with the CPU"
fi
grep -E -- '^    --- PASS' "$tmp/llama.log" | awk '{ printf "  %-5s %s\n", $2, $3 }'
echo "  every logged loss (train and eval) of cuda and cpu agrees to 1e-4 relative; LoRA's losses and adapter gradients too (TestLoRACUDA)"
echo "  train --dtype=bfloat16 on cuda logs cpu's losses to 1e-3; --dtype=float16 trains with loss scaling, its scaler state resumed (TestTrain16CUDA)"
echo
echo "cuda_emu: OK"
