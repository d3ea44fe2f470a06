#!/usr/bin/env bash
# bench_serve.sh: requests/s and latency of cmd/serve at 1, 4 and 16
# concurrent clients, measured with wrk (Debian: apt-get install wrk).
#
#   scripts/bench_serve.sh [-seconds N] [-tokens N] [-ckpt FILE]
#
# Without -ckpt it first trains the CPU recipe's model shape (n_layer 4,
# n_head 4, n_embd 128, block 64, character tokenizer on tiny Shakespeare)
# for a few iterations: the speed of generation does not depend on how well
# the model is trained. Every request asks for -tokens new tokens (default
# 64) after a one-line prompt (POST /v1/completions), with its own seed; the
# server batches the requests in flight together (continuous batching). It prints wrk's requests/s and its 50th and 99th
# latency percentiles for each concurrency, with the CPU model and load.
set -euo pipefail

seconds=10
tokens=64
ckpt=""
while [ $# -gt 0 ]; do
	case "$1" in
	-seconds) seconds="$2"; shift 2 ;;
	-tokens) tokens="$2"; shift 2 ;;
	-ckpt) ckpt="$2"; shift 2 ;;
	-h | --help) sed -n '2,14p' "$0"; exit 0 ;;
	*) echo "bench_serve.sh: unknown argument $1 (see -h)" >&2; exit 2 ;;
	esac
done
command -v wrk >/dev/null || { echo "bench_serve.sh: needs wrk (apt-get install wrk)" >&2; exit 1; }

cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
go build -o "$tmp/train" ./cmd/train
go build -o "$tmp/serve" ./cmd/serve
if [ -z "$ckpt" ]; then
	"$tmp/train" --dataset=shakespeare_char --out_dir="$tmp/out" \
		--n_layer=4 --n_head=4 --n_embd=128 --block_size=64 --batch_size=12 \
		--max_iters=20 --eval_interval=20 --eval_iters=1 --num_tokens=1 --progress=plain >/dev/null
	ckpt="$tmp/out/ckpt.safetensors"
fi
port=$((20000 + RANDOM % 20000))
"$tmp/serve" --model="$ckpt" --addr="127.0.0.1:$port" >"$tmp/serve.log" 2>&1 &
pid=$!
for _ in $(seq 50); do
	curl -fs "127.0.0.1:$port/health" >/dev/null 2>&1 && break
	sleep 0.2
done

# Each wrk connection sends its own seed, so that requests differ.
cat >"$tmp/seed.lua" <<LUA
local n = 0
request = function()
	n = n + 1
	return wrk.format("POST", "/v1/completions", {["Content-Type"] = "application/json"},
		'{"prompt": "ROMEO:", "max_tokens": $tokens, "seed": ' .. n .. '}')
end
LUA

echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, $(grep -m1 -o -w -e avx512f /proc/cpuinfo || grep -m1 -o -w avx2 /proc/cpuinfo); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "each request: $tokens new tokens; $seconds s per concurrency"
printf '%-8s %12s %12s %12s %14s %8s\n' clients requests/s "p50 ms" "p99 ms" "tokens/s" errors
for c in 1 4 16; do
	out=$(wrk -t "$((c < 2 ? c : 2))" -c "$c" -d "${seconds}s" --timeout 120s --latency -s "$tmp/seed.lua" "http://127.0.0.1:$port")
	rps=$(awk '/^Requests\/sec/ {print $2}' <<<"$out")
	p50=$(awk '$1 == "50%" {print $2}' <<<"$out")
	p99=$(awk '$1 == "99%" {print $2}' <<<"$out")
	ms() { awk -v v="$1" 'BEGIN { u = v; sub(/[0-9.]+/, "", u); x = v + 0; if (u == "us") x /= 1000; else if (u == "s") x *= 1000; else if (u == "m") x *= 60000; printf "%.1f", x }'; }
	errs=$(awk '/Socket errors|Non-2xx/ {print}' <<<"$out" | tr -s ' ' | paste -sd';' -)
	printf '%-8s %12s %12s %12s %14.0f %8s\n' "$c" "$rps" "$(ms "$p50")" "$(ms "$p99")" "$(awk -v r="$rps" -v t="$tokens" 'BEGIN {print r*t}')" "${errs:-0}"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
