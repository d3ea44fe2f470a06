#!/usr/bin/env bash
# readme_commands.sh: runs the command lines of README.md, examples/README.md
# and examples/*/README.md (their ```sh blocks, and the `go run
# ./examples/...` commands of examples/README.md's table) the way a new
# user would: in a fresh clone of the commit under test, in a temporary
# folder with nothing beside it. Slow commands get flags appended that shorten them (Go's flag
# package takes the last value given, so `--max_iters=20` after the README's
# `--max_iters=2000` wins); every other word of the command is the README's.
#
# The commands are extracted from the files, not copied here, and each one
# must have an entry in the table below (plan): a README command that has
# none fails the script, so the README cannot grow a command that nothing
# runs. An entry says how the command runs: as written, shortened, with a
# stand-in for what CI cannot reach (the network), or built but not run,
# with the reason:
#
#   - `git clone https://github.com/wickml/wick`: the clone is of this
#     repository's HEAD (CI has no network, and the commit under test is
#     what must work); every later command runs in it.
#   - `go get github.com/wickml/wick@latest`: runs as written in a module of
#     its own beside the clone's folder, resolved through a replace
#     directive that points at the clone (GOPROXY=off), and the README's
#     first program is built and run there, as a user's program.
#   - `go test ./...`: .ci/run runs it in a fresh clone in a step of its
#     own; here `go vet ./...` type-checks every package and test instead
#     (README_FULL=1 runs the test command itself).
#   - the `-tags cuda` build runs where gcc, the CUDA headers and
#     libcuda.so are installed (scripts/cuda_ci.sh installs them before
#     this script in .ci/run), and the binary then runs `--device=cuda`, which without a
#     GPU must fail with one line on stderr, as the README says (with a GPU,
#     it trains a few steps).
#   - the `-tags mpi` build and `mpirun -np 2` run where MPI is installed
#     (scripts/mpi_ci.sh installs Open MPI before this script in .ci/run);
#     as root, Open MPI's OMPI_ALLOW_RUN_AS_ROOT variables stand in for
#     --allow-run-as-root.
#   - cmd/serve and examples/serve are started on a free port (the
#     README's 127.0.0.1:8080 becomes 127.0.0.1:0), the README's curl
#     request is sent to each, and each is stopped after it.
#   - the notebook's commands (examples/README.md): scripts/notebook.sh is
#     .ci/run's last step; --inplace (it rewrites the committed notebook)
#     and `jupyter notebook` (an interactive server) are not run.
#
# Usage: scripts/readme_commands.sh     (from anywhere; 50 s on 2 idle cores
#        with Go's caches warm, 3.5 min on 2 busy ones)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

tmp="$(mktemp -d)"
server_pid=""
cleanup() {
	if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT
clone="$tmp/clone/wick"  # the clone, alone in its folder
user="$tmp/user/first"   # the module of `go get`, in another folder

die() { printf 'readme_commands: FAIL: %s\n' "$*" >&2; exit 1; }
note() { printf '   (%s)\n' "$*"; }
stop_server() {
	if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; server_pid=""; fi
}

# commands FILE... prints the command lines of the ```sh blocks of each
# file, one per line: continuation lines joined, comments and the prompt
# of a blank line dropped, runs of white space made one space.
commands() {
	awk '
		/^```sh[ \t]*$/ { inblock = 1; next }
		inblock && /^```/ { inblock = 0; next }
		inblock {
			line = $0
			sub(/[ \t]+#.*$/, "", line)
			sub(/^[ \t]*#.*$/, "", line)
			if (cont != "") { line = cont " " line; cont = "" }
			if (line ~ /\\[ \t]*$/) { sub(/\\[ \t]*$/, "", line); cont = line; next }
			gsub(/[ \t]+/, " ", line); sub(/^ /, "", line); sub(/ $/, "", line)
			if (line != "") print line
		}' "$@"
}

# in_clone runs a command line in the clone, printing it first and the last
# lines of its output after.
in_clone() {
	printf '\n$ %s\n' "$1"
	local rc=0
	(cd "$clone" && timeout 600 bash -c "$1") >"$tmp/out" 2>&1 || rc=$?
	if [ "$rc" != 0 ]; then
		cat "$tmp/out"
		die "exit status $rc from: $1"
	fi
	tail -n 4 "$tmp/out"
}

short="--max_iters=20 --lr_decay_iters=20 --warmup_iters=5 --eval_interval=10 --eval_iters=2 --num_tokens=20"

# plan runs one README command, or fails when it has no entry.
plan() {
	local cmd="$1"
	case "$cmd" in
	"git clone https://github.com/wickml/wick && cd wick")
		printf '\n$ %s\n' "$cmd"
		note "done first, before every other command: $clone is a clone of $root at $(git -C "$clone" rev-parse --short HEAD)"
		;;
	"go get github.com/wickml/wick@latest")
		printf '\n$ %s\n' "$cmd"
		note "in a module of its own, through a replace directive to the clone; then the README's first program"
		mkdir -p "$user"
		(
			cd "$user"
			go mod init example.com/first >/dev/null 2>&1
			go mod edit -replace "github.com/wickml/wick=$clone"
			GOPROXY=off GOFLAGS=-mod=mod $cmd
			cp "$clone/examples/basics/main.go" main.go
			# the dependencies' checksums from the clone's go.sum (the
			# checksum database is out of reach too); tidy adds no others
			cp "$clone/go.sum" go.sum
			GOPROXY=off GOSUMDB=off GOFLAGS=-mod=mod go mod tidy
			GOPROXY=off go run . >"$tmp/out" 2>&1 || { cat "$tmp/out"; exit 1; }
			grep -q '^tensor(\[\[' "$tmp/out" || { cat "$tmp/out"; exit 1; }
			head -n 2 "$tmp/out"
		) || die "$cmd and the first program in a module of its own"
		;;
	"go test ./...")
		if [ "${README_FULL:-}" = 1 ]; then
			in_clone "$cmd"
		else
			in_clone "go vet ./..."
			note "go test ./... itself runs in a fresh clone in .ci/run's own step; README_FULL=1 runs it here"
		fi
		;;
	"go run ./examples/basics")
		in_clone "$cmd"
		grep -q '^tensor(\[\[' "$tmp/out" || die "$cmd did not print a gradient"
		;;
	"go run ./examples/broadcasting" | "go run ./examples/autograd")
		in_clone "$cmd"
		;;
	"go run ./examples/gpt")
		in_clone "$cmd -iters 30"
		;;
	"go run ./cmd/train")
		in_clone "$cmd $short --data_max_bytes=300000"
		grep -q '^done: 20 iterations' "$tmp/out" || die "$cmd: no 'done' line"
		;;
	"go run ./cmd/train --dataset=shakespeare_char --device=cpu --eval_iters=20 --log_interval=1 --block_size=64 --batch_size=12 --n_layer=4 --n_head=4 --n_embd=128 --max_iters=2000 --lr_decay_iters=2000 --dropout=0.0 --learning_rate=1e-3 --min_lr=1e-4 --beta2=0.99 --warmup_iters=100 --out_dir=out-shakespeare-char" | \
		"go run ./cmd/train --dataset=shakespeare_char --max_iters=500")
		in_clone "$cmd $short"
		grep -q '^done: 20 iterations' "$tmp/out" || die "$cmd: no 'done' line"
		;;
	"go run ./cmd/train --resume --out_dir=out-shakespeare-char --max_iters=2500")
		in_clone "$cmd --max_iters=25 --num_tokens=20"
		grep -q '^done: 25 iterations' "$tmp/out" || die "$cmd: the resumed run did not reach 25 iterations"
		;;
	"go run ./cmd/train sample --out_dir=out --prompt=\"func main\" --num_tokens=200" | \
		"go run ./cmd/train sample --out_dir=out-shakespeare-char --prompt=\"ROMEO:\" --num_tokens=200")
		in_clone "$cmd --num_tokens=20"
		;;
	"go build -tags cuda -o train ./cmd/train")
		cuda_built=""
		if [ -f /usr/include/cuda.h ] && command -v gcc >/dev/null && ldconfig -p 2>/dev/null | grep 'libcuda\.so ' >/dev/null; then
			in_clone "$cmd"
			cuda_built=1
		else
			printf '\n$ %s\n' "$cmd"
			note "not built: gcc, CUDA's headers (/usr/include/cuda.h) or libcuda.so is missing; scripts/cuda_ci.sh installs them"
		fi
		;;
	"./train --dataset=shakespeare_char --device=cuda")
		printf '\n$ %s\n' "$cmd"
		if [ -z "${cuda_built:-}" ]; then
			note "not run: the -tags cuda build above was skipped"
		elif (cd "$clone" && timeout 600 $cmd $short) >"$tmp/out" 2>"$tmp/err"; then
			note "trained on a GPU"
			tail -n 2 "$tmp/out"
		else
			cat "$tmp/err"
			[ "$(wc -l <"$tmp/err")" = 1 ] && grep -q cuda "$tmp/err" ||
				die "without a GPU, $cmd must fail with one line on stderr"
			note "no GPU here: failed in one line, as the README says"
		fi
		;;
	"go build -tags mpi -o train ./cmd/train")
		mpi_built=""
		if command -v mpirun >/dev/null && { pkg-config --exists mpi 2>/dev/null || pkg-config --exists ompi 2>/dev/null; }; then
			in_clone "$cmd"
			mpi_built=1
		else
			printf '\n$ %s\n' "$cmd"
			note "not built: MPI (mpirun, pkg-config's mpi) is missing; scripts/mpi_ci.sh installs Open MPI"
		fi
		;;
	"mpirun -np 2 ./train --dataset=shakespeare_char --gradient_accumulation_steps=2")
		if [ -z "${mpi_built:-}" ]; then
			printf '\n$ %s\n' "$cmd"
			note "not run: the -tags mpi build above was skipped"
		else
			in_clone "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 $cmd $short --out_dir=out-mpi"
			grep -q '^dist: world size 2' "$tmp/out" || die "$cmd: not a world of 2 ranks"
		fi
		;;
	"go run ./cmd/serve --model=out-shakespeare-char --addr=127.0.0.1:8080" | \
		"go run ./examples/serve -ckpt out/ckpt.safetensors -addr 127.0.0.1:8080")
		printf '\n$ %s\n' "$cmd"
		note "built, then started on a free port (127.0.0.1:0), so that the script can stop it"
		stop_server
		pkg="$(printf '%s' "$cmd" | awk '{print $3}')"
		(cd "$clone" && go build -o "$tmp/server" "$pkg")
		args="${cmd#go run "$pkg" }"
		args="${args//127.0.0.1:8080/127.0.0.1:0}"
		(cd "$clone" && eval "exec \"\$tmp/server\" $args") >"$tmp/serve.out" 2>&1 &
		server_pid=$!
		addr=""
		for _ in $(seq 300); do
			addr="$(sed -n 's#.* on http://\([^/]*\)/v1$#\1#p' "$tmp/serve.out")"
			[ -n "$addr" ] && break
			kill -0 "$server_pid" 2>/dev/null || { cat "$tmp/serve.out"; die "the server exited"; }
			sleep 0.1
		done
		[ -n "$addr" ] || { cat "$tmp/serve.out"; die "the server did not say where it listens"; }
		cat "$tmp/serve.out"
		;;
	"curl 127.0.0.1:8080/v1/"*)
		printf '\n$ %s\n' "$cmd"
		[ -n "${addr:-}" ] || die "curl before the server"
		body="$(eval "${cmd/127.0.0.1:8080/$addr} -sS --fail")" || die "$cmd"
		printf '%s\n' "${body:0:300}"
		case "$body" in *'"text_completion"'*) ;; *) die "$cmd: no completion in the answer" ;; esac
		stop_server
		;;
	"scripts/notebook.sh")
		printf '\n$ %s\n' "$cmd"
		note "not run here: .ci/run runs it as its last step (it installs nbconvert and builds gophernotes)"
		;;
	"scripts/notebook.sh --inplace")
		printf '\n$ %s\n' "$cmd"
		note "not run: it rewrites the committed notebook; scripts/notebook.sh runs the same cells"
		;;
	"GOPROXY='https://proxy.golang.org|off' jupyter notebook examples/wick.ipynb")
		printf '\n$ %s\n' "$cmd"
		note "not run: it starts an interactive Jupyter server; scripts/notebook.sh runs the notebook in the same kernel"
		;;
	*)
		die "no entry in scripts/readme_commands.sh for the README command: $cmd"
		;;
	esac
}

files=("$root/README.md" "$root/examples/README.md")
for f in "$root"/examples/*/README.md; do files+=("$f"); done
mapfile -t cmds < <(
	for f in "${files[@]}"; do commands "$f"; done
	grep -o '`go run \./examples/[a-z]*`' "$root/examples/README.md" | tr -d '`'
)
[ "${#cmds[@]}" -gt 10 ] || die "found only ${#cmds[@]} commands in ${files[*]}: the extraction is broken"
printf 'readme_commands: %d commands from %s\n' "${#cmds[@]}" "${files[*]#"$root/"}"
start=$SECONDS
# the clone first: the README's `go get` (in Install, above the clone
# command) resolves to it. No network in CI, and the commit under test is
# the one that must work, so the clone is of this repository's HEAD.
mkdir -p "$(dirname "$clone")"
git clone -q "$root" "$clone"
git -C "$clone" checkout -q --detach "$(git -C "$root" rev-parse HEAD)"
[ "$(ls -A "$(dirname "$clone")")" = wick ] || die "the clone's folder holds more than the clone"
for c in "${cmds[@]}"; do
	plan "$c"
done
printf '\nreadme_commands: all %d commands ran in %d s\n' "${#cmds[@]}" "$((SECONDS - start))"
