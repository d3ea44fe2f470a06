#!/usr/bin/env bash
# bench_finetune.sh times a full fine-tuning step at SmolLM2-135M's shapes
# (hidden 576, 30 layers, 9 heads, 3 key/value heads, intermediate 1536,
# vocab 49152, tied, random weights) on random tokens, -batch sequences of
# -block tokens: Wick (cmd/benchlora, lora_rank 0) at GOMAXPROCS 1 and 2 and
# PyTorch (scripts/bench_train_peer.py --model smollm2-135m, the Llama
# transcription of scripts/bench_generate_peer.py) at 1 and 2 threads. Each
# step is forward, cross-entropy, backward, clip, AdamW, zero-grad. It
# prints each one's mean ms/step over -steps timed steps (after one untimed
# step; Wick takes one more, measuring its activations), tokens/s, and the
# ratio of Wick's tokens/s to PyTorch's at each side's faster setting, with
# the load average before and after.
#
# Usage: scripts/bench_finetune.sh [-batch N] [-block N] [-steps N] [-threads "1 2"]
set -euo pipefail

batch=4
block=256
steps=2
threads="1 2"
while [ $# -gt 0 ]; do
	case "$1" in
	-batch) batch="$2"; shift 2 ;;
	-block) block="$2"; shift 2 ;;
	-steps) steps="$2"; shift 2 ;;
	-threads) threads="$2"; shift 2 ;;
	-h | --help) sed -n '2,14p' "$0"; exit 0 ;;
	*) echo "bench_finetune.sh: unknown argument $1 (see -h)" >&2; exit 2 ;;
	esac
done
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "bench_finetune.sh: needs /usr/bin/python3 with torch (apt-get install python3-torch)" >&2; exit 1; }
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/benchlora" ./cmd/benchlora
if [ -z "${OPENBLAS_CORETYPE:-}" ]; then
	if grep -qw avx512f /proc/cpuinfo; then OPENBLAS_CORETYPE=SkylakeX; else OPENBLAS_CORETYPE=Haswell; fi
fi
export OPENBLAS_CORETYPE

echo "== $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) CPUs; batch $batch, block $block, $steps timed steps" >&2
echo "== load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
declare -A tps
for th in $threads; do
	out=$(GOMAXPROCS=$th "$tmp/benchlora" -batch "$batch" -block "$block" -lora_rank 0 -warmup 1 -steps "$steps")
	echo "  wick threads=$th $out" >&2
	ms=$(sed -n 's|.* ms/step=\([0-9.]*\).*|\1|p' <<<"$out")
	tps[wick$th]=$(echo "$batch * $block * 1000 / $ms" | bc -l)
	out=$(OMP_NUM_THREADS=$th /usr/bin/python3 scripts/bench_train_peer.py --model smollm2-135m --batch "$batch" --block "$block" --warmup 1 --iters "$steps")
	echo "  $out" >&2
	tps[torch$th]=$(sed -n 's|.* tokens/s=\([0-9.]*\).*|\1|p' <<<"$out")
done
echo "== load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
bw=0 bt=0
for th in $threads; do
	printf 'threads=%s wick tokens/s=%.1f torch tokens/s=%.1f\n' "$th" "${tps[wick$th]}" "${tps[torch$th]}"
	if (($(echo "${tps[wick$th]} > $bw" | bc -l))); then bw=${tps[wick$th]}; fi
	if (($(echo "${tps[torch$th]} > $bt" | bc -l))); then bt=${tps[torch$th]}; fi
done
printf 'ratio wick/torch tokens/s (each at its faster thread count): %.2f×\n' "$(echo "$bw / $bt" | bc -l)"
