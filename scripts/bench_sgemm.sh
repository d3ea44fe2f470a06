#!/usr/bin/env bash
# bench_sgemm.sh: Wick's sgemm (internal/blas) against numpy/OpenBLAS on the
# same shapes and thread counts, in one invocation.
#
# Usage: scripts/bench_sgemm.sh [-rounds N] [-threads LIST]
#        (default: -rounds 5 -threads 1,2; LIST is comma-separated)
#
# Each round runs, for every shape and thread count, Wick's BenchmarkSgemm and
# then the peer (scripts/bench_sgemm_peer.py, with /usr/bin/python3), so that
# both see nearly the same background load; the tables show the medians over the rounds in
# GFLOP/s (2·m·n·k per product) and their ratio: per second of wall time, and
# (one thread) per second of the process's CPU time, which other processes
# on a shared machine disturb much less.
#
# The peer needs numpy on OpenBLAS (Debian: apt-get install libopenblas0-pthread).
# OPENBLAS_CORETYPE picks OpenBLAS's kernels: SkylakeX where the CPU has
# AVX-512, else Haswell (Debian's OpenBLAS misdetects some AMD CPUs and falls
# back to SSE3 kernels; SkylakeX's kernels fault without AVX-512). Override
# with PEER_CORETYPE=Zen (or any OpenBLAS core name).
set -euo pipefail

rounds=5
threads=(1 2)
while [ $# -gt 0 ]; do
	case "$1" in
	-rounds) rounds="$2"; shift 2 ;;
	-threads) IFS=, read -r -a threads <<<"$2"; shift 2 ;;
	-h | --help) sed -n '2,19p' "$0"; exit 0 ;;
	*) echo "bench_sgemm.sh: unknown argument $1 (see -h)" >&2; exit 2 ;;
	esac
done
case "$rounds" in '' | *[!0-9]* | 0) echo "bench_sgemm.sh: -rounds wants a positive integer, got '$rounds'" >&2; exit 2 ;; esac
for t in "${threads[@]}"; do
	case "$t" in '' | *[!0-9]* | 0) echo "bench_sgemm.sh: -threads wants positive integers such as 1,2, got '$t'" >&2; exit 2 ;; esac
done
cd "$(dirname "$0")/.."

if [ -z "${PEER_CORETYPE:-}" ]; then
	if grep -qw avx512f /proc/cpuinfo; then PEER_CORETYPE=SkylakeX; else PEER_CORETYPE=Haswell; fi
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/blas.test" ./internal/blas

echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; $(date -u '+%Y-%m-%d %H:%M UTC'); load average $(cut -d' ' -f1-3 /proc/loadavg)"
kernel=$("$tmp/blas.test" -test.run '^TestKernelName$' -test.v | sed -n 's/.*kernel: //p')
echo "# Wick micro-kernel: $kernel; peer OPENBLAS_CORETYPE=$PEER_CORETYPE"

shapes=$(/usr/bin/python3 scripts/bench_sgemm_peer.py --list)
for r in $(seq "$rounds"); do
	for t in "${threads[@]}"; do
		# shape by shape, Wick then the peer, so that both see nearly the
		# same background load
		for s in $shapes; do
			"$tmp/blas.test" -test.run '^$' -test.bench "^BenchmarkSgemm/$s/t$t\$" -test.benchtime 0.2s |
				awk -v t="$t" '/^BenchmarkSgemm/ {
					split($1, p, "/"); w = "nan"; c = "nan"
					for (i = 2; i < NF; i++) { if ($(i+1) == "GFLOP/s") w = $i; if ($(i+1) == "cpuGFLOP/s") c = $i }
					print "wick", p[2], t, w, c }' >>"$tmp/results"
			OPENBLAS_CORETYPE=$PEER_CORETYPE OPENBLAS_NUM_THREADS=$t OMP_NUM_THREADS=$t \
				/usr/bin/python3 scripts/bench_sgemm_peer.py --only "$s" --runs 1 --seconds 0.2 2>>"$tmp/peer.log" |
				awk -v t="$t" '{ print "peer", $1, t, $2, $3 }' >>"$tmp/results"
		done
	done
	echo "# round $r/$rounds done" >&2
done
head -1 "$tmp/peer.log" | sed 's/^# /# peer: /'
echo "# load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"

/usr/bin/python3 - "$tmp/results" <<'PY'
import collections, math, statistics, sys
wall = collections.defaultdict(list)
cpu = collections.defaultdict(list)
order = []
for line in open(sys.argv[1]):
    who, shape, t, w, c = line.split()
    if (shape, t) not in order:
        order.append((shape, t))
    wall[who, shape, t].append(float(w))
    if t == "1":
        cpu[who, shape, t].append(float(c))

def med(xs):
    xs = [x for x in xs if not math.isnan(x)]
    return statistics.median(xs) if xs else float("nan")

def table(title, data, threads):
    rounds = max(len(v) for v in data.values())
    print(f"\n{title} (GFLOP/s, median of {rounds} rounds)")
    print(f"{'shape':<18} {'layout':>6} {'threads':>7} {'Wick':>7} {'OpenBLAS':>9} {'ratio':>6}")
    for t in threads:
        for shape, tt in order:
            if tt != t:
                continue
            w, p = med(data["wick", shape, t]), med(data["peer", shape, t])
            name, layout = (shape[:-2], shape[-2:]) if shape.startswith("gpt") else (shape, "NN")
            print(f"{name:<18} {layout:>6} {t:>7} {w:7.1f} {p:9.1f} {w / p:6.2f}")

threads = sorted({t for _, t in order}, key=int)
table("Wall clock", wall, threads)
if "1" in threads:
    table("Per second of CPU time, 1 thread (steadier on a shared machine)", cpu, ["1"])
PY
