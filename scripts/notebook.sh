#!/usr/bin/env bash
# Builds the gophernotes Jupyter kernel from its sources, installs its kernel
# spec as gophernotes' README does, runs every cell of examples/wick.ipynb in
# it with nbconvert, and checks the result (go test ./examples -run
# TestNotebookOutputs): it fails if a cell errors, prints on stderr or prints
# a warning, or if a picture is stored twice.
#
#   scripts/notebook.sh            # execute a copy in a temporary folder, check it
#   scripts/notebook.sh --inplace  # then store the outputs in examples/wick.ipynb
#
# Needs Go, a C compiler (gophernotes imports each package as a Go plugin,
# which needs cgo) and Jupyter's nbconvert. Run as root on Debian or Ubuntu,
# it installs the missing ones with apt-get (gcc, jupyter-nbconvert; Jupyter
# from Debian, not PyPI). Everything else comes from the Go module proxy.
# Takes about 45 s once Go's caches hold gophernotes and the plugins' builds
# (the cells themselves run in about 20 s); from empty Go caches, about 2 min
# of CPU (5 min on a busy 2-core machine).
#
# gophernotes v0.7.5, its latest release, does not run as released with a
# current Go: its interpreter, gomacro, panics on Go 1.18+ generics in the
# standard library and on Go 1.23+ type aliases. So it is built with the
# newest gomacro that skips generic declarations, a golang.org/x/tools that
# builds with this Go, `godebug gotypesalias=0` (the pinned go.mod and go.sum
# are in scripts/notebook/), and the fix of display.JSONer's proxy
# that gophernotes made after the release (commit 1a743ef), without which a
# newer gomacro refuses to start.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

inplace=0
case "${1:-}" in
"") ;;
--inplace) inplace=1 ;;
*)
	echo "usage: scripts/notebook.sh [--inplace]" >&2
	exit 2
	;;
esac

gophernotes_version=v0.7.5

# jupyter is Debian's /usr/bin/jupyter unless one on PATH has nbconvert.
find_jupyter() {
	for j in jupyter /usr/bin/jupyter; do
		if command -v "$j" >/dev/null && "$j" nbconvert --version >/dev/null 2>&1; then
			jupyter=$(command -v "$j")
			return 0
		fi
	done
	return 1
}

echo "== tools"
missing=()
command -v gcc >/dev/null || missing+=(gcc libc6-dev)
find_jupyter || missing+=(jupyter-nbconvert)
if ((${#missing[@]})); then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		echo "installing ${missing[*]} with apt-get"
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
		find_jupyter
	else
		echo "notebook.sh: install ${missing[*]} (Debian package names) first" >&2
		exit 1
	fi
fi
echo "go: $(go version)"
echo "jupyter: $jupyter, nbconvert $("$jupyter" nbconvert --version)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== build gophernotes $gophernotes_version"
src=$(cd "$work" && go mod download -json "github.com/gopherdata/gophernotes@$gophernotes_version" |
	sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -d "$src" ] || {
	echo "notebook.sh: go mod download gave no source folder for gophernotes" >&2
	exit 1
}
cp -R "$src" "$work/gophernotes"
chmod -R u+w "$work/gophernotes"
(
	cd "$work/gophernotes"
	sed -i -e 's/^\tJSON_  func(interface{}) string$/\tJSON_  func(interface{}) map[string]interface{}/' \
		-e 's/^func (P \*proxy_JSONer) JSON() string {$/func (P *proxy_JSONer) JSON() map[string]interface{} {/' x_package.go
	if [ "$(grep -c 'map\[string\]interface{}' x_package.go)" -lt 2 ]; then
		echo "notebook.sh: the display.JSONer fix did not apply to x_package.go" >&2
		exit 1
	fi
	cp "$root/scripts/notebook/gophernotes.go.mod" go.mod
	cp "$root/scripts/notebook/gophernotes.go.sum" go.sum
)
bin=$(go env GOBIN)
[ -n "$bin" ] || bin=$(go env GOPATH)/bin
mkdir -p "$bin"
(cd "$work/gophernotes" && CGO_ENABLED=1 go build -o "$bin/gophernotes" .)
echo "built $bin/gophernotes"

echo "== kernel spec"
kernel_dir=$("$jupyter" --data-dir)/kernels/gophernotes
mkdir -p "$kernel_dir"
cp "$work/gophernotes/kernel/"logo-*.png "$kernel_dir/"
sed "s|gophernotes|$bin/gophernotes|" <"$work/gophernotes/kernel/kernel.json.in" >"$kernel_dir/kernel.json"
echo "installed $kernel_dir/kernel.json"

echo "== execute examples/wick.ipynb"
go mod download # Wick's requirements, for the plugins gophernotes builds
# The notebook imports Wick by paths relative to itself (../tensor), for
# which gomacro writes a go.mod with a replace directive and runs go get.
# go get first looks github.com/wickml/wick up, and uses the replacement
# only when that lookup says "not found": a "direct" lookup of an
# unpublished repository fails otherwise, and so does a proxy that answers
# "forbidden". So the kernel gets the proxies of GOPROXY without "direct",
# each falling through ("|") to "off", which reads as not found.
proxies=$(go env GOPROXY | tr ',|' '\n\n' | grep -v -x -e direct -e off -e '' | paste -sd'|' || true)
export GOPROXY="${proxies:+$proxies|}off"
echo "GOPROXY=$GOPROXY"
export CGO_ENABLED=1
out=$work/out
mkdir -p "$out"
execute() {
	timeout 1200 "$jupyter" nbconvert --to notebook --execute \
		--ExecutePreprocessor.timeout=900 --ExecutePreprocessor.record_timing=False \
		--output-dir "$out" --output wick.ipynb examples/wick.ipynb
}
start=$(date +%s)
# gomacro's compiler fails now and then on a cell that runs on every other
# try (seen in one of seven runs of an unchanged notebook, 2026-12-01: "not a package:
# \"ctx\"" for a method call in a closure, where it swallowed a panic while
# compiling the method value and retried the expression as a type). Such a
# failure is printed and the notebook runs once more; an error in Wick or in
# the notebook fails both runs.
if ! execute; then
	echo "notebook.sh: the run above failed; running the notebook once more (gomacro's compiler is not deterministic)" >&2
	execute
fi
echo "executed in $(($(date +%s) - start)) s"

echo "== check the outputs"
CGO_ENABLED=0 go test ./examples/ -count=1 -run 'TestNotebookOutputs$' -v -notebook-file="$out/wick.ipynb" |
	grep -v '^=== RUN'
if [ "$inplace" = 1 ]; then
	cp "$out/wick.ipynb" examples/wick.ipynb
	echo "stored the outputs in examples/wick.ipynb"
fi
