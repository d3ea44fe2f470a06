#!/usr/bin/env bash
# bench_dist.sh measures data-parallel training on this machine, side by
# side in one run (needs Open MPI or MPICH: scripts/mpi_ci.sh installs it):
#
#   1. nanoGPT's CPU recipe (scripts/bench_train.sh: n_layer 4, n_head 4,
#      n_embd 128, block 64, batch 12, AdamW, on tiny Shakespeare) with
#      gradient_accumulation_steps 2, in cmd/train built with -tags mpi:
#      1 rank with GOMAXPROCS=2 (two micro-batches in turn) against 2 ranks
#      under mpirun with GOMAXPROCS=1 each (one micro-batch each), the same
#      samples and 2×12×64 tokens per step; the median ms per step of the
#      timed iterations, from rank 0's log.jsonl;
#   2. the cost of Wick's gradient reduction per step on the recipe's
#      gradients (dist's BenchmarkSyncGrads: the gradients where Backward
#      writes them, in the buckets, reduced in place;
#      BenchmarkSyncGradsCopied: every gradient in a storage of its own,
#      copied into the bucket and back, as before gradient buffers), the
#      bare collective through dist
#      (BenchmarkAllReduceFlat) and a bare MPI_Allreduce loop in C
#      (scripts/bench_allreduce.c) of the same number of floats, on 2 ranks:
#      the median time of 200 calls each (the mean, which other load on a
#      shared machine skews, is in the benchmarks' own output).
#
# The runs alternate, -runs times, so that load from other processes hits
# all of them alike.
#
# Usage: scripts/bench_dist.sh [-runs N] [-iters N] [-warmup N] [-data FILE]
set -euo pipefail

runs=3
iters=40
warmup=5
data="$(cd "$(dirname "$0")/.." && pwd)/data/shakespeare_char/input.txt"
while [ $# -gt 0 ]; do
	case "$1" in
	-runs) runs="$2"; shift 2 ;;
	-iters) iters="$2"; shift 2 ;;
	-warmup) warmup="$2"; shift 2 ;;
	-data) data="$2"; shift 2 ;;
	-h | --help) sed -n '2,26p' "$0"; exit 0 ;;
	*) echo "bench_dist.sh: unknown argument $1 (see -h)" >&2; exit 2 ;;
	esac
done

cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -tags mpi -o "$tmp/train" ./cmd/train
go test -tags mpi -c -o "$tmp/dist.test" ./dist
mpicc -O2 -o "$tmp/bench_allreduce" scripts/bench_allreduce.c
mpirun=(mpirun)
if mpirun --version 2>/dev/null | grep -q "Open MPI"; then mpirun+=(--allow-run-as-root --oversubscribe); fi

recipe=(--data="$data" --n_layer=4 --n_head=4 --n_embd=128 --block_size=64 --batch_size=12
	--gradient_accumulation_steps=2 --learning_rate=1e-3 --min_lr=1e-4 --warmup_iters=100
	--lr_decay_iters=2000 --beta2=0.99 --dropout=0 --max_iters=$((warmup + iters))
	--eval_interval=100000 --eval_iters=1 --log_interval=1 --num_samples=0 --progress=plain)
n=$(cd "$tmp" && ./dist.test -test.run='^$' -test.bench=AllReduceFlat -test.benchtime=1x | sed -n 's/.* \([0-9]*\) floats.*/\1/p')

# step_ms DIR: the median ms of the logged steps from iteration $warmup on.
step_ms() {
	python3 -c '
import json, statistics, sys
ms = [r["ms"] for r in map(json.loads, open(sys.argv[1])) if r["kind"] == "train" and r["iter"] >= int(sys.argv[2])]
print("%.2f" % statistics.median(ms))' "$1/log.jsonl" "$warmup"
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

echo "== $runs runs of $iters timed steps (after $warmup); $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); recipe gradients: $n floats" >&2
for r in $(seq "$runs"); do
	rm -rf "$tmp/one" "$tmp/two"
	GOMAXPROCS=2 "$tmp/train" "${recipe[@]}" --out_dir="$tmp/one" >/dev/null
	"${mpirun[@]}" -np 2 -x GOMAXPROCS=1 "$tmp/train" "${recipe[@]}" --out_dir="$tmp/two" >/dev/null
	one=$(step_ms "$tmp/one")
	two=$(step_ms "$tmp/two")
	echo "$one" >>"$tmp/one.ms"
	echo "$two" >>"$tmp/two.ms"
	bare=$("${mpirun[@]}" -np 2 "$tmp/bench_allreduce" "$n" 200 | sed -n 's/.*: median \([0-9.]*\) ms.*/\1/p')
	echo "$bare" >>"$tmp/bare.ms"
	# one benchmark per mpirun: both ranks print its line; keep the slower
	# median
	bench() {
		(cd "$tmp" && "${mpirun[@]}" -np 2 ./dist.test -test.run='^$' -test.bench="^Benchmark$1\$" -test.benchtime=200x) |
			awk '{for (i=1;i<NF;i++) if ($(i+1)=="median-ms") print $i}' | sort -n | tail -1
	}
	sync=$(bench SyncGrads)
	copied=$(bench SyncGradsCopied)
	flat=$(bench AllReduceFlat)
	echo "$sync" >>"$tmp/sync.ms"
	echo "$copied" >>"$tmp/copied.ms"
	echo "$flat" >>"$tmp/flat.ms"
	echo "run $r: step 1 rank × 2 threads $one ms, 2 ranks × 1 thread $two ms; SyncGrads $sync ms (copied $copied ms), dist AllReduce $flat ms, bare MPI_Allreduce $bare ms" >&2
done

tokens=$((2 * 12 * 64))
one=$(median <"$tmp/one.ms")
two=$(median <"$tmp/two.ms")
sync=$(median <"$tmp/sync.ms")
copied=$(median <"$tmp/copied.ms")
flat=$(median <"$tmp/flat.ms")
bare=$(median <"$tmp/bare.ms")
echo
printf 'medians of %d runs; %d tokens per step\n' "$runs" "$tokens"
printf '%-32s %10s %10s\n' "" "ms/step" "tokens/s"
printf '%-32s %10.2f %10.0f\n' "1 rank × 2 threads" "$one" "$(echo "$tokens * 1000 / $one" | bc -l)"
printf '%-32s %10.2f %10.0f\n' "2 ranks × 1 thread" "$two" "$(echo "$tokens * 1000 / $two" | bc -l)"
printf 'speed of 2 ranks against 1: %.2f×\n' "$(echo "$one / $two" | bc -l)"
printf '\ngradient reduction of %d floats on 2 ranks (median ms of 200 calls)\n' "$n"
printf '%-32s %10.3f\n' "dist.DataParallel.SyncGrads" "$sync" "SyncGrads, gradients copied" "$copied" "dist.Comm.AllReduceFloat32s" "$flat" "bare MPI_Allreduce (C)" "$bare"
printf 'SyncGrads / bare MPI_Allreduce: %.2f× (gradients copied: %.2f×); SyncGrads / the 2-rank step: %.2f%%\n' "$(echo "$sync / $bare" | bc -l)" "$(echo "$copied / $bare" | bc -l)" "$(echo "100 * $sync / $two" | bc -l)"
