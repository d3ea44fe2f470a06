#!/usr/bin/env bash
# gen_tokenizer_golden.sh regenerates testdata/tokenizer/ (the ids of
# tiktoken's "gpt2" encoding for the tokenizer package's tests) and
# tokenizer/tables.go (the character classes of GPT-2's pre-tokenizer as
# tiktoken sees them): it installs npm's @dqbd/tiktoken (tiktoken's Rust
# core built for WASM) into a temporary folder and runs
# scripts/gen_tokenizer_golden.js with node (a few minutes). It reads tiny
# Shakespeare from the repository's data/shakespeare_char/input.txt.
#
# Usage: scripts/gen_tokenizer_golden.sh
set -euo pipefail

version=1.0.22
root="$(cd "$(dirname "$0")/.." && pwd)"
while [ $# -gt 0 ]; do
	case "$1" in
	-h | --help) sed -n '2,10p' "$0"; exit 0 ;;
	*) echo "gen_tokenizer_golden.sh: unknown argument $1 (see -h)" >&2; exit 2 ;;
	esac
done
command -v node >/dev/null && command -v npm >/dev/null || { echo "gen_tokenizer_golden.sh: needs node and npm (apt-get install nodejs npm)" >&2; exit 1; }
[ -f "$root/data/shakespeare_char/input.txt" ] || { echo "gen_tokenizer_golden.sh: $root/data/shakespeare_char/input.txt not found" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm init -y >/dev/null && npm install --no-audit --no-fund --silent "@dqbd/tiktoken@$version" >/dev/null)
NODE_PATH="$tmp/node_modules" node "$root/scripts/gen_tokenizer_golden.js" "$root" "$version"
gofmt -w "$root/tokenizer/tables.go"
