#!/usr/bin/env bash
# nccl_emu.sh: runs data-parallel training's NCCL path (package dist and
# cmd/train built with -tags cuda,mpi) end to end on a machine without a
# GPU. It builds
#
#   - libcuda.so.1 from scripts/kernel_emu/driver.cpp, the emulated driver
#     of scripts/cuda_emu.sh (device memory is host memory, kernels run on
#     the CPU);
#   - libnccl.so.2 from scripts/kernel_emu/nccl.cpp: a stand-in NCCL whose
#     collectives run over MPI on those (host-backed) device pointers, and
#     which checks the bootstrap (every rank joins with rank 0's unique id),
#     the context current on the calling thread, the stream and the
#     buffers' bounds;
#
# vets those packages with the tags, checks with readelf that train built
# with -tags cuda,mpi links libcuda and libmpi and no other CUDA library
# (NCCL is loaded with dlopen), and runs with LD_LIBRARY_PATH pointing at
# the stand-ins:
#
#   1. dist's TestMPINCCL: the collective bodies (AllReduce and Broadcast
#      on sizes 0, 1, 7 and 1e6, exact for sums of integers) and
#      DataParallel against one process, on 2 ranks under mpirun with every
#      tensor on the GPU; and TestMPINCCLMissing: without NCCL, the first
#      collective on a GPU tensor fails on every rank naming what was tried;
#   2. train --device cuda on 2 ranks (mpirun -np 2, one micro-batch each)
#      against 1 rank on the same samples (2 micro-batches): the loss of
#      every step and the final weights within 1e-5 relative; and on 2
#      ranks without NCCL: one line naming what was tried, non-zero exit.
#
# Usage: scripts/nccl_emu.sh   (needs cuda.h, g++ and MPI: scripts/cuda_ci.sh
# and scripts/mpi_ci.sh install them; under a minute on two cores;
# NCCL_EMU_KEEP=1 keeps the work directory)
set -euo pipefail
cd "$(dirname "$0")/.."

die() { printf 'nccl_emu: FAIL: %s\n' "$*" >&2; exit 1; }
[ -f /usr/include/cuda.h ] || die "cuda.h is missing: run scripts/cuda_ci.sh, which installs Debian's CUDA toolkit"
command -v mpirun >/dev/null && pkg-config --exists mpi || die "MPI is missing: run scripts/mpi_ci.sh, which installs Open MPI"

tmp=$(mktemp -d)
if [ "${NCCL_EMU_KEEP:-0}" = 1 ]; then
	echo "nccl_emu: keeping the libraries, binaries and logs in $tmp"
else
	trap 'rm -rf "$tmp"' EXIT
fi
# shellcheck source=scripts/kernel_emu/build_driver.sh
. scripts/kernel_emu/build_driver.sh
mpirun=(mpirun)
if mpirun --version 2>/dev/null | grep -q "Open MPI"; then mpirun+=(--allow-run-as-root --oversubscribe); fi

echo "== nccl_emu: go vet -tags cuda,mpi; building dist's test binary and train"
go vet -tags cuda,mpi ./dist/ ./cmd/train/ ./cuda/
mkdir -p "$tmp/lib"
go test -c -tags cuda,mpi -o "$tmp/dist.test" ./dist/
go build -tags cuda,mpi -o "$tmp/train" ./cmd/train
needed=$(readelf -d "$tmp/train" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
echo "  train links: $needed"
for lib in $needed; do
	case "$lib" in
	libcuda.so.1 | libmpi.so* | libmpich.so* | libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.* | ld-linux*) ;;
	*) die "train built with -tags cuda,mpi links $lib: only libcuda.so.1 and MPI may be linked (NCCL and cuBLAS are loaded with dlopen)" ;;
	esac
done
echo "$needed" | grep -q libcuda.so.1 && echo "$needed" | grep -qE 'libmpi(ch)?\.so' || die "train does not link libcuda.so.1 and MPI"

echo "== nccl_emu: building the emulated driver and the stand-in NCCL"
emu_build_driver "$tmp" "$tmp/dist.test" "$tmp/train"
# shellcheck disable=SC2046
"${cxx[@]}" -shared -Wl,-soname,libnccl.so.2 "$emu/nccl.cpp" $(pkg-config --cflags --libs mpi) "$tmp/lib/libcuda.so.1" -o "$tmp/lib/libnccl.so.2"
export LD_LIBRARY_PATH="$tmp/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export WICKEMU_SEED=${WICKEMU_SEED:-$(( $(date +%s%N) % 4294967291 + 1 ))}
echo "  thread order seed WICKEMU_SEED=$WICKEMU_SEED"

echo "== nccl_emu: dist's collectives and DataParallel on 2 ranks, every tensor on the GPU (TestMPINCCL, TestMPINCCLMissing)"
start=$(date +%s)
if ! (cd dist && WICK_REQUIRE_GPU=1 "$tmp/dist.test" -test.count=1 -test.v -test.run '^TestMPINCCL') >"$tmp/dist.log" 2>&1; then
	grep -vE '^\s*$' "$tmp/dist.log" | tail -40
	die "the NCCL tests of package dist failed on the emulated device"
fi
for t in TestMPINCCL TestMPINCCLMissing; do
	grep -q -- "^--- PASS: $t " "$tmp/dist.log" || { tail -20 "$tmp/dist.log"; die "$t did not pass"; }
done
grep -oE 'GPU collectives over .*' "$tmp/dist.log" | head -1 | sed 's/^/  /'
printf '  TestMPINCCL and TestMPINCCLMissing passed in %ds\n' $(($(date +%s) - start))

echo "== nccl_emu: train --device cuda on 2 ranks against 1 rank on the same samples"
corpus="$tmp/corpus.txt"
for i in $(seq 40); do echo "the quick brown fox jumps over the lazy dog, said the fox to the dog $i times."; done >"$corpus"
args=(--data="$corpus" --device=cuda --n_layer=1 --n_head=2 --n_embd=32 --block_size=16 --batch_size=4
	--gradient_accumulation_steps=2 --max_iters=10 --eval_interval=10 --eval_iters=1 --log_interval=1
	--always_save_checkpoint --num_samples=0 --progress=plain)
"${mpirun[@]}" -np 2 "$tmp/train" "${args[@]}" --out_dir="$tmp/two" >"$tmp/two.log" 2>&1 || { cat "$tmp/two.log"; die "train on 2 ranks failed"; }
"$tmp/train" "${args[@]}" --out_dir="$tmp/one" >"$tmp/one.log" 2>&1 || { cat "$tmp/one.log"; die "train on 1 rank failed"; }
grep -E '^dist: ' "$tmp/two.log" | sed 's/^/  /'
grep -q 'GPU gradients reduced over nccl 2\.' "$tmp/two.log" || die "the 2-rank run did not reduce its gradients with NCCL"
[ "$(grep -c 'rank [01]: cuda:0' "$tmp/two.log")" = 2 ] || die "the ranks did not train on cuda:0 (local rank mod 1 GPU)"
/usr/bin/python3 - "$tmp/one" "$tmp/two" <<'PY' || die "2 ranks and 1 rank disagree"
import json, struct, sys
def losses(d):
    return {r["iter"]: r["loss"] for r in map(json.loads, open(d + "/log.jsonl")) if r["kind"] == "train"}
def weights(d):
    b = open(d + "/ckpt.safetensors", "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    h = json.loads(b[8:8 + n])
    out = {}
    for k, v in h.items():
        if k == "__metadata__" or k.startswith("optimizer.") or v["dtype"] != "F32":
            continue
        s, e = v["data_offsets"]
        out[k] = struct.unpack("<%df" % ((e - s) // 4), b[8 + n + s:8 + n + e])
    return out
one, two = sys.argv[1:]
lo, lt = losses(one), losses(two)
assert lo and lo.keys() == lt.keys(), (lo, lt)
bad = [(i, lo[i], lt[i]) for i in lo if abs(lo[i] - lt[i]) > 1e-5 * abs(lo[i])]
for i, a, b in bad:
    print("  iteration %d: loss %r on 1 rank, %r on 2" % (i, a, b))
wo, wt = weights(one), weights(two)
assert wo and wo.keys() == wt.keys()
for k in wo:
    scale = max(abs(v) for v in wo[k]) or 1
    for a, b in zip(wo[k], wt[k]):
        if abs(a - b) > 1e-5 * scale:
            bad.append(k)
            print("  %s: %r on 1 rank, %r on 2 (1e-5 relative to the largest, %r)" % (k, a, b, scale))
            break
print("  %d steps: every loss within 1e-5 relative; %d weight tensors within 1e-5 of each one's largest" % (len(lo), len(wo)) if not bad else "  disagreement")
sys.exit(1 if bad else 0)
PY

echo "== nccl_emu: train --device cuda on 2 ranks without NCCL"
mkdir -p "$tmp/nonccl"
cp "$tmp/lib/libcuda.so.1" "$tmp/lib/libcublas.so.12" "$tmp/nonccl/"
if LD_LIBRARY_PATH="$tmp/nonccl" "${mpirun[@]}" -np 2 "$tmp/train" "${args[@]}" --out_dir="$tmp/none" >"$tmp/none.log" 2>&1; then
	cat "$tmp/none.log"
	die "train on 2 GPUs without NCCL exited 0"
fi
grep '^train: ' "$tmp/none.log" >"$tmp/none.err" || true
[ "$(wc -l <"$tmp/none.err")" = 1 ] && grep -q 'cannot load NCCL.*tried libnccl.so.2 .*WICK_NCCL' "$tmp/none.err" ||
	{ cat "$tmp/none.log"; die "train without NCCL did not fail with one line naming what it tried"; }
cut -c1-150 "$tmp/none.err" | sed 's/^/  /; s/$/…/'

echo
echo "nccl_emu: OK"
