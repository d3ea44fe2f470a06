#!/usr/bin/env bash
# device_run.sh: the device side of scripts/device_check.sh. Runs on a lent
# GPU machine, from the repository root of the carried working tree, what
# device_check.sh built into .gpu/:
#
#   1. the device, the driver and the cuBLAS the tests load (the toolkit's,
#      or the one inside PyTorch's wheel: cuda.BLASLibrary looks there too),
#   2. every -tags cuda test binary in its package directory, with
#      WICK_REQUIRE_GPU=1 (a GPU test that cannot get a GPU or cuBLAS fails
#      instead of skipping), then a table of PASS / FAIL / TIMEOUT per
#      package with times and skip counts, and the last lines of each
#      failing log (the gpu column says whether the binary contains the GPU
#      backend; the others run the same CPU code as CI, and may fail here
#      only for want of a Go toolchain or other host tools); a skip in a
#      GPU binary fails the run (TestNoGPU excepted: it tests the machine
#      without a GPU),
#      The Llama family's GPU tests (the suite's RMSNorm, Rotary, SwiGLU
#      and GroupedAttention, TestFusedLlamaOps, TestLlamaTrainingMatchesCPU,
#      cmd/train's TestFineTuneLlamaCUDA and TestLoRACUDA) are then listed by
#      name, and so are the bfloat16 and float16 ones (the suite's Cast16:
#      every bit pattern against the CPU's casts; MatMul16: cublasGemmEx
#      with float32 compute; the 16-bit elementwise kernels; TestTensor16
#      and TestOps16 against the CPU; tensor's TestGolden16CUDA: PyTorch's
#      16-bit goldens; autocast on the GPU: tensor's TestAutocastCUDA and
#      TestAutocastCastsParameterOnceCUDA, the cuda package's
#      TestAutocastTrainingMatchesCPU, TestGradScalerOverflowCUDA and
#      TestGradScalerUnscaleCUDA,
#      cmd/train's TestTrain16CUDA: train --dtype=bfloat16 and float16),
#   3. the tests that hardware may make flaky, 20 times each
#      (the suite's Embedding: float atomics in any order; MatMul and
#      TestMatMulTF32: TF32; Softmax: long rows),
#   4. compute-sanitizer memcheck and racecheck on a set of the cuda
#      package's tests, where the machine has compute-sanitizer,
#   5. cmd/gpubench and scripts/gpubench_peer.py (PyTorch) on the same
#      shapes, after gpubench's roofline prediction, a table of tokens/s
#      with the ratio, and one ClipGradNorm on GPT-2 124M gradients timed
#      alone.
#
# Full logs go to $OUT (the run tool's output folder; /tmp/wick-device when
# unset). Environment: ONLY=<name> runs one test binary (e.g. ONLY=cuda);
# BENCH=0 skips the benchmarks; EXTRA=0 skips steps 3 and 4; TEST_TIMEOUT
# (seconds per binary, 240); WICK_CUDA_SYNC=1 makes every kernel launch
# wait and check its error. Exits non-zero if any test failed or a GPU
# test skipped.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
OUT=${OUT:-/tmp/wick-device}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export WICK_REQUIRE_GPU=1

echo "== device"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -4
nvidia-smi 2>/dev/null | grep -m1 'CUDA Version' | sed 's/  */ /g'
ls /usr/local/cuda/lib64/libcublas.so* 2>/dev/null | head -3
for p in python3 python /usr/bin/python3; do
	if command -v "$p" >/dev/null && "$p" -c 'import nvidia, os' 2>/dev/null; then
		"$p" -c 'import nvidia, os, glob
for d in nvidia.__path__:
    for f in sorted(glob.glob(os.path.join(d, "*", "lib", "libcublas.so*"))): print("in the PyTorch wheels:", f)' 2>/dev/null | head -3
		break
	fi
done

[ -f .gpu/manifest ] || { echo "device_run: .gpu/manifest missing: run scripts/device_check.sh first and carry .gpu"; exit 2; }
for f in .gpu/*.gz; do [ -e "$f" ] && gunzip -f "$f"; done
chmod +x .gpu/*.test .gpu/gpubench 2>/dev/null

echo
echo "== tests (-tags cuda)"
printf '%-26s %-4s %-8s %8s %6s\n' package gpu result seconds skips
failed=()
while read -r name dir gpu; do
	[ -n "${ONLY:-}" ] && [ "$name" != "$ONLY" ] && continue
	log="$OUT/$name.log"
	t0=$(date +%s.%N)
	(cd "$dir" && timeout "${TEST_TIMEOUT:-240}" "$root/.gpu/$name.test" -test.count=1 -test.v) >"$log" 2>&1
	rc=$?
	t1=$(date +%s.%N)
	case $rc in
	0) res=PASS ;;
	124 | 137) res=TIMEOUT ;;
	*) res=FAIL ;;
	esac
	skips=$(grep -c -- '--- SKIP' "$log")
	printf '%-26s %-4s %-8s %8.1f %6s\n' "$name" "$gpu" "$res" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" "$skips"
	[ "$res" = PASS ] || failed+=("$name")
done <.gpu/manifest
# a GPU test binary must not skip: WICK_REQUIRE_GPU=1 makes a missing GPU
# or cuBLAS a failure, and any other skip means a test did not run here
while read -r name dir gpu; do
	[ -n "${ONLY:-}" ] && [ "$name" != "$ONLY" ] && continue
	[ "$gpu" = yes ] || continue
	if grep -- '--- SKIP' "$OUT/$name.log" | grep -qv -- '--- SKIP: TestNoGPU'; then
		echo
		echo "== $name: GPU tests skipped (a device run must run them all)"
		grep -A1 -- '--- SKIP' "$OUT/$name.log" | grep -v -- '--- SKIP: TestNoGPU' | head -10
		failed+=("$name (skips)")
	fi
done <.gpu/manifest
grep -m1 -h 'cuBLAS:' "$OUT/cuda.log" 2>/dev/null | sed 's/.*\(cuda:0 is\)/== \1/'
for name in "${failed[@]}"; do
	[ -f "$OUT/$name.log" ] || continue
	echo
	echo "== $name: failing tests and last lines ($OUT/$name.log)"
	grep -E -- '^(--- FAIL|panic:|FAIL)' "$OUT/$name.log" | head -20
	tail -n 25 "$OUT/$name.log"
done

# the Llama family's fused kernels by name (they ran in the table above;
# this lists them so that a failure among a package's other tests cannot
# hide them): the backend suite's cases, the tensor-level ops against the
# CPU, a small model trained on both, and train --init_from on hub models
if [ -z "${ONLY:-}" ] && [ -f "$OUT/cuda.log" ]; then
	echo
	echo "== the Llama family on the GPU (RMSNorm, rotary, SwiGLU, grouped-query attention)"
	for t in TestBackend/RMSNorm TestBackend/Rotary TestBackend/SwiGLU TestBackend/GroupedAttention TestFusedLlamaOps TestLlamaTrainingMatchesCPU; do
		res=missing
		grep -q -- "--- PASS: $t " "$OUT/cuda.log" && res=PASS
		grep -q -- "--- FAIL: $t " "$OUT/cuda.log" && res=FAIL
		printf '  %-32s %s\n' "$t" "$res"
		[ "$res" = PASS ] || failed+=("$t")
	done
	if [ -f "$OUT/cmd_train.log" ]; then
		for t in "TestFineTuneLlamaCUDA:train --init_from=DIR --device cuda against cpu" \
			"TestLoRACUDA:LoRA adapters trained on cuda against cpu (losses, adapter gradients, train --lora_rank)"; do
			tn=${t%%:*}
			res=missing
			grep -q -- "^--- PASS: $tn " "$OUT/cmd_train.log" && res=PASS
			grep -q -- "^--- FAIL: $tn " "$OUT/cmd_train.log" && res=FAIL
			printf '  %-32s %s (%s)\n' "$tn" "$res" "${t#*:}"
			[ "$res" = PASS ] || failed+=("$tn")
		done
	fi
fi

# the bfloat16 and float16 kernels by name: the casts (every bit pattern
# against the CPU's), GemmEx products, the elementwise kernels,
# and 16-bit tensors forward and backward against the CPU
if [ -z "${ONLY:-}" -o "${ONLY:-}" = cuda ] && [ -f "$OUT/cuda.log" ]; then
	echo
	echo "== bfloat16 and float16 on the GPU (casts, cublasGemmEx products, elementwise kernels, 16-bit tensors)"
	for t in TestBackend/Cast16 TestBackend/MatMul16 TestBackend/Unary16 TestBackend/UnaryGrad16 TestBackend/Binary16 TestBackend/Where16 \
		TestTensor16 TestOps16 TestAutocastTrainingMatchesCPU TestGradScalerOverflowCUDA TestGradScalerUnscaleCUDA; do
		res=missing
		grep -q -- "--- PASS: $t " "$OUT/cuda.log" && res=PASS
		grep -q -- "--- FAIL: $t " "$OUT/cuda.log" && res=FAIL
		printf '  %-32s %s\n' "$t" "$res"
		[ "$res" = PASS ] || failed+=("$t")
	done
	if [ -f "$OUT/tensor.log" ]; then
		res=missing
		grep -q -- '^--- PASS: TestGolden16CUDA ' "$OUT/tensor.log" && res=PASS
		grep -q -- '^--- FAIL: TestGolden16CUDA ' "$OUT/tensor.log" && res=FAIL
		printf '  %-32s %s (PyTorch'"'"'s bfloat16 and float16 goldens, forward and backward)\n' TestGolden16CUDA "$res"
		[ "$res" = PASS ] || failed+=(TestGolden16CUDA)
		for t in TestAutocastCUDA TestAutocastCastsParameterOnceCUDA; do
			res=missing
			grep -q -- "^--- PASS: $t " "$OUT/tensor.log" && res=PASS
			grep -q -- "^--- FAIL: $t " "$OUT/tensor.log" && res=FAIL
			printf '  %-32s %s (autocast on the GPU against the CPU)\n' "$t" "$res"
			[ "$res" = PASS ] || failed+=("$t")
		done
	fi
	if [ -f "$OUT/cmd_train.log" ]; then
		res=missing
		grep -q -- '^--- PASS: TestTrain16CUDA ' "$OUT/cmd_train.log" && res=PASS
		grep -q -- '^--- FAIL: TestTrain16CUDA ' "$OUT/cmd_train.log" && res=FAIL
		printf '  %-32s %s (train --dtype=bfloat16 and float16 --device cuda, resumed)\n' TestTrain16CUDA "$res"
		[ "$res" = PASS ] || failed+=(TestTrain16CUDA)
	fi
fi

if [ "${EXTRA:-1}" != 0 ] && [ -z "${ONLY:-}" -o "${ONLY:-}" = cuda ] && [ -x .gpu/cuda.test ]; then
	echo
	echo "== flaky-prone tests, 20 runs each (-test.count=20)"
	(cd cuda && timeout 150 "$root/.gpu/cuda.test" -test.count=20 -test.v -test.run '^(TestBackend|TestMatMulTF32)$/^(Embedding|MatMul|Softmax)$') >"$OUT/flaky.log" 2>&1
	rc=$?
	for t in TestBackend/Embedding TestBackend/MatMul TestBackend/Softmax TestMatMulTF32; do
		printf '  %-22s %3d passed %3d failed\n' "$t" "$(grep -c -- "--- PASS: $t " "$OUT/flaky.log")" "$(grep -c -- "--- FAIL: $t " "$OUT/flaky.log")"
	done
	if grep -q -- '^--- FAIL' "$OUT/flaky.log" || { [ $rc != 0 ] && [ $rc != 124 ]; }; then
		grep -E -- 'differ|--- FAIL|panic' "$OUT/flaky.log" | head -20
		failed+=("flaky-prone x20")
	elif [ $rc = 124 ]; then
		echo "  timed out before the 20th run (no failure seen)"
	fi

	sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1)
	if [ -n "$sanitizer" ]; then
		# the kernels of every concept, at small sizes (the sanitizer
		# runs them tens of times slower)
		tests='^(TestBackend|TestUploadStaged)$/^(Unary|Binary|Copy|CopyOverlapping|CastSpecialValues|Cast16|Unary16|Binary16|MatMul16|Reduce|Softmax|LayerNormGradWeightsOnly|Embedding|CrossEntropy|GlobalNorm)$'
		for tool in memcheck racecheck; do
			echo
			echo "== compute-sanitizer --tool $tool"
			(cd cuda && timeout 120 "$sanitizer" --tool "$tool" --error-exitcode 99 --print-limit 20 \
				"$root/.gpu/cuda.test" -test.count=1 -test.v -test.run "$tests") >"$OUT/sanitizer-$tool.log" 2>&1
			rc=$?
			grep -E '^=+ (ERROR SUMMARY|RACECHECK SUMMARY)' "$OUT/sanitizer-$tool.log" | tail -2
			ran=$(grep -c -- '^--- \(PASS\|FAIL\)' "$OUT/sanitizer-$tool.log")
			if [ $rc = 0 ]; then
				echo "  $tool: clean ($ran tests)"
			elif [ $rc = 124 ]; then
				echo "  $tool: timed out after $ran tests (not counted as a failure)"
			elif [ "$ran" = 0 ] && [ $rc != 99 ]; then
				# the tool itself could not run (no injection library, an
				# unsupported driver): not a finding about Wick
				echo "  $tool: compute-sanitizer could not run the binary (exit $rc):"
				grep -E '^=+ ' "$OUT/sanitizer-$tool.log" | head -3
			else
				grep -E -- '^=+ |--- FAIL' "$OUT/sanitizer-$tool.log" | head -30
				failed+=("sanitizer $tool")
			fi
		done
	else
		echo
		echo "== compute-sanitizer: not on this machine (skipped)"
	fi
fi

if [ "${BENCH:-1}" != 0 ]; then
	echo
	echo "== benchmark: gpubench vs PyTorch (float32, TF32 off)"
	timeout 240 .gpu/gpubench -preset baby,gpt2 2>&1 | tee "$OUT/bench-wick.txt"
	echo
	echo "== ClipGradNorm alone on GPT-2 124M gradients (one-pass norm, read back, scaling)"
	timeout 120 .gpu/gpubench -preset gpt2 -clip -warmup 2 -iters 5 2>&1 | grep -v '^ ' | tee "$OUT/bench-clip.txt"
	py=""
	for p in python3 python /usr/bin/python3; do
		if command -v "$p" >/dev/null && "$p" -c 'import torch' 2>/dev/null; then
			py=$p
			break
		fi
	done
	if [ -n "$py" ]; then
		timeout 240 "$py" scripts/gpubench_peer.py --preset baby,gpt2 2>&1 | tee "$OUT/bench-torch.txt"
	else
		echo "device_run: no python with torch found" | tee "$OUT/bench-torch.txt"
	fi
	echo
	printf '%-8s %14s %14s %8s\n' preset wick_tok/s torch_tok/s ratio
	for preset in baby gpt2; do
		w=$(grep "^wick preset=$preset " "$OUT/bench-wick.txt" | sed -n 's/.*tokens\/s=\([0-9.]*\).*/\1/p')
		t=$(grep -v '^predict' "$OUT/bench-torch.txt" | grep "preset=$preset " | sed -n 's/.*tokens\/s=\([0-9.]*\).*/\1/p')
		r="-"
		[ -n "$w" ] && [ -n "$t" ] && r=$(awk -v a="$w" -v b="$t" 'BEGIN { printf "%.3f", a / b }')
		printf '%-8s %14s %14s %8s\n' "$preset" "${w:--}" "${t:--}" "$r"
	done
fi

echo
if [ ${#failed[@]} -eq 0 ]; then
	echo "device_run: OK"
else
	echo "device_run: FAILED: ${failed[*]}"
	exit 1
fi
