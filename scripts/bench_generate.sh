#!/usr/bin/env bash
# bench_generate.sh times text generation at GPT-2 124M shapes (12 layers,
# 12 heads, 768 wide, vocab 50257, context 1024, random weights) on the CPU:
# batch 1, a 64-token prompt, 256 new tokens, temperature 1, no top-k. Side
# by side, -runs times in turn so that load from other processes hits all
# alike: Wick (cmd/benchgen, its key/value cache) with GOMAXPROCS=1 and 2;
# PyTorch (scripts/bench_generate_peer.py, run by /usr/bin/python3) with a
# key/value cache written in the peer, and running nanoGPT's generate (no
# cache), each at 1 and 2 threads (OMP_NUM_THREADS).
#
# It prints each one's median tokens/s (256 over the whole generate call,
# the prompt's forward pass included), the prompt's forward pass alone
# (prefill), the time to first token for a 1024-token prompt (not for the
# no-cache runs: it is the same forward pass), CPU ms per token and peak
# RSS; the ratios of Wick's tokens/s to PyTorch's at each side's faster
# setting; and the memory-bandwidth bound: the bytes of weights a token
# reads divided by the bandwidth of a Go copy over 1 GiB (bytes read plus
# written per second, STREAM's convention), at 1 and 2 goroutines, with
# Wick's tokens/s as a share of it. The load average is printed before and
# after: the machine may be shared.
#
# With -model smollm2-135m both sides run instead a Llama at SmolLM2-135M's
# shapes (hidden 576, 30 layers, 9 heads, 3 key/value heads, intermediate
# 1536, vocab 49152, tied, random weights; the peer a transcription of Hugging
# Face's Llama forward with a key/value cache), with -temperature (default 1;
# 0 is greedy); there is no no-cache run.
#
# Usage: scripts/bench_generate.sh [-model gpt2|smollm2-135m] [-runs N] [-new N] [-prompt N] [-ttft N] [-temperature T]
#
# The peer gets OPENBLAS_CORETYPE=SkylakeX on CPUs with AVX-512 and Haswell
# otherwise (Debian's OpenBLAS misdetects some CPUs and falls back to SSE3
# kernels); set OPENBLAS_CORETYPE yourself to override.
set -euo pipefail

runs=1
newtok=256
prompt=64
ttft=1024
model=gpt2
temperature=1
while [ $# -gt 0 ]; do
	case "$1" in
	-runs) runs="$2"; shift 2 ;;
	-new) newtok="$2"; shift 2 ;;
	-prompt) prompt="$2"; shift 2 ;;
	-ttft) ttft="$2"; shift 2 ;;
	-model) model="$2"; shift 2 ;;
	-temperature) temperature="$2"; shift 2 ;;
	-h | --help) sed -n '2,32p' "$0"; exit 0 ;;
	*) echo "bench_generate.sh: unknown argument $1 (see -h)" >&2; exit 2 ;;
	esac
done
case "$model" in
gpt2) wargs=() pargs=() peers="torch_cache torch_nocache" ;;
smollm2-135m) wargs=(-model "$model" -temperature "$temperature") pargs=(--model "$model" --temperature "$temperature") peers="torch_cache" ;;
*) echo "bench_generate.sh: unknown -model $model (gpt2 or smollm2-135m)" >&2; exit 2 ;;
esac
[ -x /usr/bin/time ] || { echo "bench_generate.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "bench_generate.sh: needs /usr/bin/python3 with torch (apt-get install python3-torch)" >&2; exit 1; }

cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/benchgen" ./cmd/benchgen

if [ -z "${OPENBLAS_CORETYPE:-}" ]; then
	if grep -qw avx512f /proc/cpuinfo; then OPENBLAS_CORETYPE=SkylakeX; else OPENBLAS_CORETYPE=Haswell; fi
fi
export OPENBLAS_CORETYPE

# one NAME CMD...: run CMD under /usr/bin/time -v; append
# "tokens/s prefill_ms ttft_ms cpu_ms/token rss_kB" to $tmp/NAME
one() {
	local name=$1
	shift
	/usr/bin/time -v -o "$tmp/time.txt" "$@" >"$tmp/out.txt"
	field() { sed -n "s|.* $1=\([0-9.]*\).*|\1|p" "$tmp/out.txt" | head -1; }
	local rss
	rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$tmp/time.txt")
	echo "$(field tokens/s) $(field prefill_ms) $(field ttft_ms) $(field cpu_ms/token) $rss" >>"$tmp/$name"
	sed 's/^/  /' "$tmp/out.txt" >&2
}

echo "== $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) CPUs, flags: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|fma|avx512f|amx_tile)$' | tr '\n' ' ')" >&2
echo "== model $model, $runs runs: prompt $prompt, $newtok new tokens, time to first token at $ttft; OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE" >&2
echo "== load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for r in $(seq "$runs"); do
	echo "run $r" >&2
	for th in 1 2; do
		GOMAXPROCS=$th one "wick$th" "$tmp/benchgen" "${wargs[@]}" -prompt "$prompt" -new "$newtok" -ttft "$ttft"
		# the bound, in a process of its own (its 2 GiB of buffers stay out
		# of the generation's peak RSS)
		GOMAXPROCS=$th "$tmp/benchgen" "${wargs[@]}" -bandwidth >"$tmp/out.txt"
		sed 's/^/  /' "$tmp/out.txt" >&2
		sed -n 's|^bandwidth .*bound_tokens/s=\([0-9.]*\).*|\1|p' "$tmp/out.txt" >>"$tmp/wick$th.bound"
	done
	for th in 1 2; do
		OMP_NUM_THREADS=$th one "torch_cache$th" /usr/bin/python3 scripts/bench_generate_peer.py "${pargs[@]}" --mode cache --prompt "$prompt" --new "$newtok" --ttft "$ttft" $([ "$r" = 1 ] && echo --check)
	done
	if [ "$model" = gpt2 ]; then
		for th in 1 2; do
			OMP_NUM_THREADS=$th one "torch_nocache$th" /usr/bin/python3 scripts/bench_generate_peer.py --mode nocache --prompt "$prompt" --new "$newtok" --ttft 0
		done
	fi
done
echo "== load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
echo >&2
printf '%-16s %10s %10s %12s %12s %14s %12s\n' "" "tokens/s" "ms/token" "prefill ms" "TTFT ms" "CPU ms/token" "peak RSS MiB"
declare -A tps
names="wick1 wick2"
for p in $peers; do names="$names ${p}1 ${p}2"; done
for name in $names; do
	col() { awk "{print \$$1}" "$tmp/$name" | median; }
	tps[$name]=$(col 1)
	printf '%-16s %10.2f %10.1f %12.1f %12.1f %14.1f %12.0f\n' "$name" "${tps[$name]}" "$(echo "1000 / ${tps[$name]}" | bc -l)" "$(col 2)" "$(col 3)" "$(col 4)" "$(echo "$(col 5) / 1024" | bc -l)"
done
best() { if (($(echo "${tps[${1}1]} >= ${tps[${1}2]}" | bc -l))); then echo "${1}1"; else echo "${1}2"; fi; }
w=$(best wick) c=$(best torch_cache)
echo
printf 'ratio %s/%s tokens/s (each side at its faster setting): %.2f×\n' "$w" "$c" "$(echo "${tps[$w]} / ${tps[$c]}" | bc -l)"
if [ "$model" = gpt2 ]; then
	n=$(best torch_nocache)
	printf 'ratio %s/%s tokens/s: %.2f×\n' "$w" "$n" "$(echo "${tps[$w]} / ${tps[$n]}" | bc -l)"
fi
for th in 1 2; do
	b=$(median <"$tmp/wick$th.bound")
	printf 'bandwidth bound at %d goroutine(s): %.2f tokens/s; wick%d reaches %.0f%% of it\n' "$th" "$b" "$th" "$(echo "100 * ${tps[wick$th]} / $b" | bc -l)"
done
