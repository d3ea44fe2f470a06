#!/usr/bin/env bash
# openai_client_test.sh checks cmd/serve against the official openai npm
# client, a client nobody here wrote: it installs openai (pinned) from npm
# into a temporary folder, builds serve and train, writes a small random
# model (go test ./cmd/serve -run TestOpenAIClientModel, a train checkpoint
# over printable ASCII with a chat template beside it), takes the greedy
# answers that `train sample --temperature=0` gives, starts serve on
# 127.0.0.1 with an API key, and runs scripts/openai_client_test.mjs with
# node: models, completions and chat, whole and streamed, greedy answers
# equal to train sample's, 32 concurrent sampled requests each equal to the
# same request alone, stop strings, n, continuous usage, and the errors of bad requests. Exits
# non-zero on any failure. .ci/run runs it.
#
# Usage: scripts/openai_client_test.sh
set -euo pipefail

# openai 7 needs Node 22; 6.30.1 is the last release that runs on Node 20
openai_version=6.30.1
root="$(cd "$(dirname "$0")/.." && pwd)"
while [ $# -gt 0 ]; do
	case "$1" in
	-h | --help) sed -n '2,13p' "$0"; exit 0 ;;
	*) echo "openai_client_test.sh: unknown argument $1 (see -h)" >&2; exit 2 ;;
	esac
done
command -v node >/dev/null && command -v npm >/dev/null || { echo "openai_client_test.sh: needs node and npm (apt-get install nodejs npm)" >&2; exit 1; }

tmp=$(mktemp -d)
server_pid=""
cleanup() {
	if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT

echo "openai_client_test.sh: npm install openai@$openai_version"
(cd "$tmp" && npm init -y >/dev/null && npm install --no-audit --no-fund --silent "openai@$openai_version" >/dev/null)

cd "$root"
go build -o "$tmp/serve" ./cmd/serve
go build -o "$tmp/train" ./cmd/train
go test -count=1 -run '^TestOpenAIClientModel$' ./cmd/serve -args -openai_model_dir="$tmp/model" >/dev/null

# the library's greedy answers, prompt included
prompts=("ROMEO:" "The quick brown fox" $'user: hi\nassistant:')
node -e 'process.stdout.write("{")' >"$tmp/expected.json"
sep=""
for p in "${prompts[@]}"; do
	"$tmp/train" sample --out_dir="$tmp/model" --prompt="$p" --temperature=0 --num_tokens=40 --num_samples=1 --device=cpu >"$tmp/sample.txt"
	# train sample ends its text with a newline
	P="$p" S="$tmp/sample.txt" SEP="$sep" node -e 'const fs=require("fs"); const s=fs.readFileSync(process.env.S,"utf8").replace(/\n$/,""); process.stdout.write(process.env.SEP+JSON.stringify(process.env.P)+":"+JSON.stringify(s))' >>"$tmp/expected.json"
	sep=","
done
echo "}" >>"$tmp/expected.json"

"$tmp/serve" --model="$tmp/model" --addr=127.0.0.1:0 --served_model_name=tiny --chat_template="$tmp/model/chat.jinja" \
	--api_key=sk-test --max_tokens=64 --max_batch=8 >"$tmp/serve.out" 2>&1 &
server_pid=$!
addr=""
for _ in $(seq 300); do
	addr="$(sed -n 's#.* on \(http://[^/]*\)/v1$#\1#p' "$tmp/serve.out")"
	[ -n "$addr" ] && break
	kill -0 "$server_pid" 2>/dev/null || { cat "$tmp/serve.out"; echo "openai_client_test.sh: serve exited" >&2; exit 1; }
	sleep 0.1
done
[ -n "$addr" ] || { cat "$tmp/serve.out"; echo "openai_client_test.sh: serve did not say where it listens" >&2; exit 1; }

status=0
node "$root/scripts/openai_client_test.mjs" "$tmp" "$addr" sk-test "$tmp/expected.json" || status=$?
kill -TERM "$server_pid"
wait "$server_pid" || { echo "openai_client_test.sh: serve exited with status $? after SIGTERM" >&2; status=1; }
server_pid=""
if [ "$status" -ne 0 ]; then
	cat "$tmp/serve.out"
	exit "$status"
fi
