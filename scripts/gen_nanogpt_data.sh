#!/usr/bin/env bash
# gen_nanogpt_data.sh regenerates cmd/train/testdata/nanogpt/data/: the
# layout nanoGPT's data/shakespeare_char/prepare.py and
# data/shakespeare/prepare.py write (train.bin, val.bin, meta.pkl), made by
# scripts/nanogpt_prepare.py, their transcription, from the first 6000
# characters of data/shakespeare_char/input.txt with /usr/bin/python3
# (numpy, pickle). The GPT-2 ids come from tiktoken's "gpt2"
# encode_ordinary, as nanoGPT's, through npm's @dqbd/tiktoken (installed
# into a temporary folder; node and npm needed).
#
# Usage: scripts/gen_nanogpt_data.sh
set -euo pipefail

version=1.0.22
root="$(cd "$(dirname "$0")/.." && pwd)"
case "${1:-}" in
-h | --help) sed -n '2,11p' "$0"; exit 0 ;;
"") ;;
*) echo "gen_nanogpt_data.sh: unknown argument $1 (see -h)" >&2; exit 2 ;;
esac
command -v node >/dev/null && command -v npm >/dev/null || { echo "gen_nanogpt_data.sh: needs node and npm (apt-get install nodejs npm)" >&2; exit 1; }
/usr/bin/python3 -c 'import numpy, pickle' || { echo "gen_nanogpt_data.sh: needs /usr/bin/python3 with numpy (apt-get install python3-numpy)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm init -y >/dev/null && npm install --no-audit --no-fund --silent "@dqbd/tiktoken@$version" >/dev/null)
cat >"$tmp/encode.js" <<'JS'
// reads text on stdin, prints tiktoken's gpt2 encode_ordinary ids as JSON
const { get_encoding } = require("@dqbd/tiktoken");
const text = require("fs").readFileSync(0, "utf8");
const enc = get_encoding("gpt2");
process.stdout.write(JSON.stringify(Array.from(enc.encode_ordinary(text))));
enc.free();
JS
out="$root/cmd/train/testdata/nanogpt/data"
rm -rf "$out/shakespeare_char" "$out/shakespeare"
NODE_PATH="$tmp/node_modules" /usr/bin/python3 "$root/scripts/nanogpt_prepare.py" \
	"$root/data/shakespeare_char/input.txt" 6000 "$out" "node $tmp/encode.js"
