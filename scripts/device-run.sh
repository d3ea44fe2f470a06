#!/usr/bin/env bash
# device-run.sh: the device side of scripts/device-check.sh. Runs on a lent
# GPU machine, from the repository root of the carried working tree, what
# device-check.sh built into .gpu/:
#
#   1. the device and driver (nvidia-smi),
#   2. every -tags cuda test binary in its package directory, then a table
#      of PASS / FAIL / TIMEOUT per package with times and skip counts, and
#      the last lines of each failing log (the gpu column says whether the
#      binary contains the GPU backend; the others run the same CPU code as
#      CI, and may fail here only for want of a Go toolchain or other
#      host tools),
#   3. cmd/gpubench and scripts/gpubench_peer.py (PyTorch) on the same
#      shapes, and a table of tokens/s with the ratio.
#
# Full logs go to $OUT (the run tool's output folder; /tmp/wick-device when
# unset). Environment: ONLY=<name> runs one test binary (e.g. ONLY=cuda);
# BENCH=0 skips the benchmarks; TEST_TIMEOUT (seconds per binary, 240);
# WICK_CUDA_SYNC=1 makes every kernel launch wait and check its error.
# Exits non-zero if any test binary failed.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
OUT=${OUT:-/tmp/wick-device}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}

echo "== device"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -4
nvidia-smi 2>/dev/null | grep -m1 'CUDA Version' | sed 's/  */ /g'
ls /usr/local/cuda/lib64/libcublas.so* 2>/dev/null | head -3

[ -f .gpu/manifest ] || { echo "device-run: .gpu/manifest missing: run scripts/device-check.sh first and carry .gpu"; exit 2; }
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
for name in "${failed[@]}"; do
	echo
	echo "== $name: failing tests and last lines ($OUT/$name.log)"
	grep -E -- '^(--- FAIL|panic:|FAIL)' "$OUT/$name.log" | head -20
	tail -n 25 "$OUT/$name.log"
done
if grep -q 'skip' "$OUT/cuda.log" 2>/dev/null && grep -q -- '--- SKIP' "$OUT/cuda.log"; then
	echo
	echo "== cuda: skipped tests"
	grep -A1 -- '--- SKIP' "$OUT/cuda.log" | head -10
fi

if [ "${BENCH:-1}" != 0 ]; then
	echo
	echo "== benchmark: gpubench vs PyTorch (float32, TF32 off)"
	timeout 240 .gpu/gpubench -preset baby,gpt2 2>&1 | tee "$OUT/bench-wick.txt"
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
		echo "device-run: no python with torch found" | tee "$OUT/bench-torch.txt"
	fi
	echo
	printf '%-8s %14s %14s %8s\n' preset wick_tok/s torch_tok/s ratio
	for preset in baby gpt2; do
		w=$(grep "preset=$preset " "$OUT/bench-wick.txt" | sed -n 's/.*tokens\/s=\([0-9.]*\).*/\1/p')
		t=$(grep "preset=$preset " "$OUT/bench-torch.txt" | sed -n 's/.*tokens\/s=\([0-9.]*\).*/\1/p')
		r="-"
		[ -n "$w" ] && [ -n "$t" ] && r=$(awk -v a="$w" -v b="$t" 'BEGIN { printf "%.3f", a / b }')
		printf '%-8s %14s %14s %8s\n' "$preset" "${w:--}" "${t:--}" "$r"
	done
fi

[ ${#failed[@]} -eq 0 ]
