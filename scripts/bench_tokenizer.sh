#!/usr/bin/env bash
# bench_tokenizer.sh times GPT-2 tokenization of one text file (tiny
# Shakespeare by default) by Wick's tokenizer (cmd/benchtok) and by
# tiktoken's core (npm @dqbd/tiktoken, its Rust code built for WASM, run by
# node: scripts/bench_tokenizer.js, installed into a temporary folder). The
# two alternate, -runs times, so that load from other processes hits both
# alike; it prints the median seconds of each and the ratio. Wick's "cold"
# time starts from an empty word cache (tiktoken has none); "warm" encodes
# the file a second time, with the cache filled. Loading the vocabulary is
# not timed on either side; tiktoken gets one untimed warm-up encoding.
#
# Usage: scripts/bench_tokenizer.sh [-runs N] [-data FILE] [-vocab DIR]
set -euo pipefail

runs=5
root="$(cd "$(dirname "$0")/.." && pwd)"
data="$root/data/shakespeare_char/input.txt"
vocab="" # empty: the vocabulary embedded in Wick
while [ $# -gt 0 ]; do
	case "$1" in
	-runs) runs="$2"; shift 2 ;;
	-data) data="$2"; shift 2 ;;
	-vocab) vocab="$2"; shift 2 ;;
	-h | --help) sed -n '2,13p' "$0"; exit 0 ;;
	*) echo "bench_tokenizer.sh: unknown argument $1 (see -h)" >&2; exit 2 ;;
	esac
done
command -v node >/dev/null && command -v npm >/dev/null || { echo "bench_tokenizer.sh: needs node and npm (apt-get install nodejs npm)" >&2; exit 1; }

cd "$root"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm init -y >/dev/null && npm install --no-audit --no-fund --silent "@dqbd/tiktoken@1.0.22" >/dev/null)
go build -o "$tmp/benchtok" ./cmd/benchtok

grep -m1 'model name' /proc/cpuinfo | sed 's/^[^:]*: /cpu: /'
echo "cores: $(nproc); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "file: $data ($(wc -c <"$data") bytes)"
: >"$tmp/wick" && : >"$tmp/tiktoken"
for i in $(seq "$runs"); do
	"$tmp/benchtok" -data "$data" ${vocab:+-vocab "$vocab"} | tee -a "$tmp/wick"
	NODE_PATH="$tmp/node_modules" node scripts/bench_tokenizer.js "$data" | tee -a "$tmp/tiktoken"
done
ids=$(sed -n 's/.* ids=\([0-9]*\).*/\1/p' "$tmp/wick" "$tmp/tiktoken" | sort -u)
[ "$(echo "$ids" | wc -l)" = 1 ] || { echo "bench_tokenizer.sh: the two sides give different numbers of ids: $ids" >&2; exit 1; }
median() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p" "$2" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
cold=$(median cold_s "$tmp/wick")
warm=$(median warm_s "$tmp/wick")
tt=$(median s "$tmp/tiktoken")
echo "median of $runs: wick cold ${cold}s, wick warm ${warm}s, tiktoken ${tt}s ($ids ids)"
awk -v c="$cold" -v w="$warm" -v t="$tt" 'BEGIN { printf "tiktoken time / wick time: %.1fx (cold cache), %.1fx (warm cache)\n", t / c, t / w }'
