#!/usr/bin/env bash
# bench_tokenizer_json.sh times encoding one text file (tiny Shakespeare by
# default) as a single string with the Llama 3 and Qwen3 tokenizer.json
# files of testdata/tokenizer/hf/, by Wick (the tokenizer package's
# BenchmarkHFEncodeShakespeare) and by Hugging Face tokenizers 0.23.2 (its
# Rust core through the Node binding, npm "tokenizers":
# scripts/bench_tokenizer_json.js, installed into a temporary folder). Both
# sides encode without special tokens and one thread; loading is not timed.
# Wick's "warm" runs have its word cache filled by earlier runs, as the
# peer's are by its untimed warm-up; "cold" starts from an empty cache. The
# two alternate -rounds times; it prints the fastest time of each and the
# ratio, with the CPU model.
#
# Usage: scripts/bench_tokenizer_json.sh [-rounds N] [-data FILE]
set -euo pipefail

rounds=3
root="$(cd "$(dirname "$0")/.." && pwd)"
data="$root/data/shakespeare_char/input.txt"
while [ $# -gt 0 ]; do
	case "$1" in
	-rounds) rounds="$2"; shift 2 ;;
	-data) data="$2"; shift 2 ;;
	-h | --help) sed -n '2,15p' "$0"; exit 0 ;;
	*) echo "bench_tokenizer_json.sh: unknown argument $1 (see -h)" >&2; exit 2 ;;
	esac
done
command -v node >/dev/null && command -v npm >/dev/null || { echo "bench_tokenizer_json.sh: needs node and npm" >&2; exit 1; }
data="$(cd "$(dirname "$data")" && pwd)/$(basename "$data")"

cd "$root"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm init -y >/dev/null && npm install --no-audit --no-fund --silent tokenizers@0.23.2 >/dev/null)
go test -c -o "$tmp/tokenizer.test" ./tokenizer/

grep -m1 'model name' /proc/cpuinfo | sed 's/^[^:]*: /cpu: /'
echo "flags: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|avx512f|avx512bw|sha_ni|bmi2)$' | tr '\n' ' ')"
echo "cores: $(nproc); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "file: $data ($(wc -c <"$data") bytes)"
if [ "$data" != "$root/data/shakespeare_char/input.txt" ]; then
	echo "bench_tokenizer_json.sh: Wick's side reads data/shakespeare_char/input.txt only" >&2
	exit 2
fi
: >"$tmp/wick" && : >"$tmp/hf"
for i in $(seq "$rounds"); do
	(cd tokenizer && GOMAXPROCS=1 "$tmp/tokenizer.test" -test.run '^$' -test.bench 'BenchmarkHFEncodeShakespeare/(llama3|qwen3)/' -test.benchtime 3x) | grep '^Benchmark' | tee -a "$tmp/wick"
	for m in llama3 qwen3; do
		NODE_PATH="$tmp/node_modules" node scripts/bench_tokenizer_json.js "$m" "testdata/tokenizer/hf/$m.json.gz" "$data" 3 | tee -a "$tmp/hf"
	done
done
for m in llama3 qwen3; do
	warm=$(grep "/$m/warm" "$tmp/wick" | awk '{print $3 / 1e9}' | sort -g | head -1)
	cold=$(grep "/$m/cold" "$tmp/wick" | awk '{print $3 / 1e9}' | sort -g | head -1)
	hf=$(grep "name=$m " "$tmp/hf" | sed 's/.* s=\([0-9.]*\).*/\1/' | sort -g | head -1)
	awk -v m="$m" -v w="$warm" -v c="$cold" -v h="$hf" 'BEGIN { printf "%s: wick %.4fs warm, %.4fs cold; tokenizers %.4fs; tokenizers time / wick time: %.2fx (warm), %.2fx (cold)\n", m, w, c, h, h / w, h / c }'
done
