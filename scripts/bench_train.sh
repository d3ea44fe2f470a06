#!/usr/bin/env bash
# bench_train.sh times one training iteration of nanoGPT's CPU recipe
# (n_layer 4, n_head 4, n_embd 128, block 64, batch 12, AdamW, dropout 0, on
# tiny Shakespeare) in Wick (cmd/benchtrain) and in PyTorch
# (scripts/bench_train_peer.py, run by /usr/bin/python3), side by side: the
# runs alternate Wick, PyTorch 1 thread, PyTorch 2 threads, -runs times, so
# that load from other processes hits all of them alike; Wick runs with
# GOMAXPROCS=1 and 2 like the peer with 1 and 2 threads. It prints the median
# ms/iter, tokens/s and peak RSS (/usr/bin/time -v) of each, and the ratio of
# Wick's tokens/s (at its default, all cores, and at its faster setting) to
# PyTorch's at its faster setting. It also prints the
# CPU time per iteration (all threads): other load on the machine disturbs
# it much less than the wall time, so it tells the work each side does;
# with one thread, also the CPU time of each run's fastest iteration (every
# iteration does the same work, and load from elsewhere only ever adds to
# it: the least disturbed measure of the two, on a host whose speed drifts
# within a run).
#
# Usage: scripts/bench_train.sh [-runs N] [-iters N] [-warmup N] [-data FILE]
#                               [-threads LIST] [-dtype bfloat16]
#
# -dtype bfloat16 adds, at each thread count, Wick with autocast
# (benchtrain -dtype bfloat16, as train --dtype=bfloat16: "wickbf") and
# PyTorch with torch.autocast("cpu", dtype=torch.bfloat16) (the peer's
# --autocast: "torchbf"), and prints their tokens/s against Wick's float32
# and each other.
#
# -threads "1" runs the one-thread sides only (default "1 2"): more runs in
# the same time for the CPU-time comparison. Besides the ratios of the
# medians it prints the medians of the per-run ratios (each run's Wick
# against the PyTorch run right after it: on a host whose speed drifts,
# the steadier of the two).
#
# The peer gets OPENBLAS_CORETYPE=SkylakeX on CPUs with AVX-512 and Haswell
# otherwise (Debian's OpenBLAS misdetects some CPUs and falls back to SSE3
# kernels); set OPENBLAS_CORETYPE yourself to override.
set -euo pipefail

runs=5
threads="1 2"
dtype=float32
iters=30
warmup=5
data="$(cd "$(dirname "$0")/.." && pwd)/data/shakespeare_char/input.txt"
while [ $# -gt 0 ]; do
	case "$1" in
	-runs) runs="$2"; shift 2 ;;
	-iters) iters="$2"; shift 2 ;;
	-warmup) warmup="$2"; shift 2 ;;
	-data) data="$2"; shift 2 ;;
	-threads) threads="$2"; shift 2 ;;
	-dtype) dtype="$2"; shift 2 ;;
	-h | --help) sed -n '2,33p' "$0"; exit 0 ;;
	*) echo "bench_train.sh: unknown argument $1 (see -h)" >&2; exit 2 ;;
	esac
done
case "$threads" in "1 2" | "1" | "2") ;; *) echo "bench_train.sh: -threads wants \"1\", \"2\" or \"1 2\", got '$threads'" >&2; exit 2 ;; esac
case "$dtype" in float32 | bfloat16) ;; *) echo "bench_train.sh: -dtype wants float32 or bfloat16, got '$dtype'" >&2; exit 2 ;; esac
[ -x /usr/bin/time ] || { echo "bench_train.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 1; }

cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/benchtrain" ./cmd/benchtrain

if [ -z "${OPENBLAS_CORETYPE:-}" ]; then
	if grep -qw avx512f /proc/cpuinfo; then OPENBLAS_CORETYPE=SkylakeX; else OPENBLAS_CORETYPE=Haswell; fi
fi
export OPENBLAS_CORETYPE

# one NAME CMD...: run CMD under /usr/bin/time -v, append "ms rss_kB cpu_ms cpu_min_ms" to $tmp/NAME
one() {
	local name=$1
	shift
	/usr/bin/time -v -o "$tmp/time.txt" "$@" >"$tmp/out.txt"
	local ms rss cpu cmin
	ms=$(sed -n 's/.* ms\/iter=\([0-9.]*\).*/\1/p' "$tmp/out.txt")
	cpu=$(sed -n 's/.*cpu_ms\/iter=\([0-9.]*\).*/\1/p' "$tmp/out.txt")
	cmin=$(sed -n 's/.*cpu_min_ms=\([0-9.]*\).*/\1/p' "$tmp/out.txt")
	rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$tmp/time.txt")
	echo "$ms $rss $cpu $cmin" >>"$tmp/$name"
	printf '  %-10s %s  (peak RSS %d MiB)\n' "$name" "$(cat "$tmp/out.txt")" $((rss / 1024)) >&2
}

echo "== $runs runs of $iters timed iterations (after $warmup), $(nproc) CPUs, OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE" >&2
for r in $(seq "$runs"); do
	echo "run $r" >&2
	for th in $threads; do
		GOMAXPROCS=$th one "wick$th" "$tmp/benchtrain" -data "$data" -iters "$iters" -warmup "$warmup"
	done
	for th in $threads; do
		OMP_NUM_THREADS=$th one "torch$th" /usr/bin/python3 scripts/bench_train_peer.py --data "$data" --iters "$iters" --warmup "$warmup"
	done
	if [ "$dtype" = bfloat16 ]; then
		for th in $threads; do
			GOMAXPROCS=$th one "wickbf$th" "$tmp/benchtrain" -data "$data" -iters "$iters" -warmup "$warmup" -dtype bfloat16
			OMP_NUM_THREADS=$th one "torchbf$th" /usr/bin/python3 scripts/bench_train_peer.py --data "$data" --iters "$iters" --warmup "$warmup" --autocast
		done
	fi
done

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
tokens=$((12 * 64))
echo >&2
printf '%-10s %10s %10s %14s %12s\n' "" "ms/iter" "tokens/s" "CPU ms/iter" "peak RSS MiB"
declare -A ms rss cpu
names=()
for th in $threads; do names+=("wick$th"); done
for th in $threads; do names+=("torch$th"); done
if [ "$dtype" = bfloat16 ]; then
	for th in $threads; do names+=("wickbf$th" "torchbf$th"); done
fi
for name in "${names[@]}"; do
	ms[$name]=$(awk '{print $1}' "$tmp/$name" | median)
	rss[$name]=$(awk '{print $2}' "$tmp/$name" | median)
	cpu[$name]=$(awk '{print $3}' "$tmp/$name" | median)
	printf '%-10s %10.2f %10.0f %14.2f %12.0f\n' "$name" "${ms[$name]}" "$(echo "$tokens * 1000 / ${ms[$name]}" | bc -l)" "${cpu[$name]}" "$(echo "${rss[$name]} / 1024" | bc -l)"
done
# perrun COL A B: the median over the runs of B's value in column COL over A's
perrun() { paste "$tmp/$2" "$tmp/$3" | awk -v c="$1" '{print $(c+4) / $c}' | median; }
# tokens/s at each side's faster setting (or the one run)
best=torch${threads%% *}
if [ "$threads" = "1 2" ] && (($(echo "${ms[torch2]} < ${ms[torch1]}" | bc -l))); then best=torch2; fi
wbest=wick${threads##* }
if [ "$threads" = "1 2" ] && (($(echo "${ms[wick1]} < ${ms[wick2]}" | bc -l))); then wbest=wick1; fi
echo
if [ "$threads" = "1 2" ]; then
	printf 'ratio wick2/%s tokens/s (medians; Wick on all %d cores, its default): %.2f×\n' "$best" "$(nproc)" "$(echo "${ms[$best]} / ${ms[wick2]}" | bc -l)"
fi
printf 'ratio %s/%s tokens/s (medians; each side at its faster setting): %.2f× (per-run median %.2f×)\n' "$wbest" "$best" "$(echo "${ms[$best]} / ${ms[$wbest]}" | bc -l)" "$(perrun 1 "$wbest" "$best")"
if [[ " $threads " == *" 1 "* ]]; then
	printf 'CPU time per iteration, wick1/torch1: %.2f× of medians (per-run median %.2f×)\n' "$(echo "${cpu[wick1]} / ${cpu[torch1]}" | bc -l)" "$(perrun 3 torch1 wick1)"
	cmin1=$(awk '{print $4}' "$tmp/wick1" | median)
	cmin2=$(awk '{print $4}' "$tmp/torch1" | median)
	printf 'CPU time of the fastest iteration, wick1/torch1: %.2f× of medians (%.2f and %.2f ms; per-run median %.2f×)\n' "$(echo "$cmin1 / $cmin2" | bc -l)" "$cmin1" "$cmin2" "$(perrun 4 torch1 wick1)"
fi
printf 'peak RSS %s/%s: %.2f×\n' "$wbest" "$best" "$(echo "${rss[$wbest]} / ${rss[$best]}" | bc -l)"
if [ "$dtype" = bfloat16 ]; then
	for th in $threads; do
		printf '%s threads: tokens/s wickbf/wick (bfloat16 autocast over float32) %.2f× (per-run median %.2f×); wickbf/torchbf %.2f× (per-run median %.2f×); torchbf/torch %.2f×\n' "$th" \
			"$(echo "${ms[wick$th]} / ${ms[wickbf$th]}" | bc -l)" "$(perrun 1 "wickbf$th" "wick$th")" \
			"$(echo "${ms[torchbf$th]} / ${ms[wickbf$th]}" | bc -l)" "$(perrun 1 "wickbf$th" "torchbf$th")" \
			"$(echo "${ms[torch$th]} / ${ms[torchbf$th]}" | bc -l)"
	done
fi
