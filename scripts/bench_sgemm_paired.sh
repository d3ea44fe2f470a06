#!/usr/bin/env bash
# bench_sgemm_paired.sh: Wick's sgemm (internal/blas) against OpenBLAS in one
# process, call against call: BenchmarkSgemmPaired, built with -tags
# openblas (cgo, Debian's libopenblas-dev; installed with apt when missing,
# which needs root).
#
# Usage: scripts/bench_sgemm_paired.sh [-rounds N] [-bench REGEXP]
#        (default: -rounds 5 -bench . : every shape of BenchmarkSgemm on one
#        and two threads; REGEXP selects sub-benchmarks, e.g. 'sq1024/t2')
#
# Each call of Wick's Sgemm is followed by OpenBLAS's on the same operands,
# so both see the same host: on a shared machine whose speed changes from
# one second to the next, this ratio is steadier than bench_sgemm.sh's,
# which times the two in separate processes (and counts numpy's per-call
# overhead against OpenBLAS). Each round prints, per shape and thread count,
# the median over its pairs; the table gives the medians over the rounds.
#
# OpenBLAS's threads spin for about 2^28 cycles after each call
# (OPENBLAS_THREAD_TIMEOUT's default), which would take a core from Wick's
# next call; the script sets OPENBLAS_THREAD_TIMEOUT=4 so that they sleep at
# once, as Wick's workers do after 100 µs: each library then wakes its
# threads on every call. OPENBLAS_CORETYPE is SkylakeX where the CPU has
# AVX-512, else Haswell (override with PEER_CORETYPE).
set -euo pipefail

rounds=5
bench=.
while [ $# -gt 0 ]; do
	case "$1" in
	-rounds) rounds="$2"; shift 2 ;;
	-bench) bench="$2"; shift 2 ;;
	-h | --help) sed -n '2,27p' "$0"; exit 0 ;;
	*) echo "bench_sgemm_paired.sh: unknown argument $1 (see -h)" >&2; exit 2 ;;
	esac
done
case "$rounds" in '' | *[!0-9]* | 0) echo "bench_sgemm_paired.sh: -rounds wants a positive integer, got '$rounds'" >&2; exit 2 ;; esac
cd "$(dirname "$0")/.."

if [ ! -e /usr/include/x86_64-linux-gnu/cblas.h ] && [ ! -e /usr/include/cblas.h ]; then
	echo "installing OpenBLAS's headers (apt-get install libopenblas-dev)" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq libopenblas-dev >/dev/null
fi
if [ -z "${PEER_CORETYPE:-}" ]; then
	if grep -qw avx512f /proc/cpuinfo; then PEER_CORETYPE=SkylakeX; else PEER_CORETYPE=Haswell; fi
fi
export OPENBLAS_CORETYPE=$PEER_CORETYPE OPENBLAS_THREAD_TIMEOUT=4

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CGO_ENABLED=1 go test -tags openblas -c -o "$tmp/blas.test" ./internal/blas

echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; $(date -u '+%Y-%m-%d %H:%M UTC'); load average $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$rounds"); do
	"$tmp/blas.test" -test.run '^$' -test.bench "^BenchmarkSgemmPaired/$bench" -test.benchtime 0.3s -test.v >"$tmp/out" || { cat "$tmp/out"; exit 1; }
	[ "$r" = 1 ] && sed -n 's/.*\(OpenBLAS kernels: .*\)/# \1/p' "$tmp/out" | head -1
	awk '/^BenchmarkSgemmPaired\// && NF > 3 {
		split($1, p, "/"); sub(/-[0-9]+$/, "", p[3]); w = o = q = "nan"
		for (i = 2; i < NF; i++) { if ($(i+1) == "wickGFLOP/s") w = $i; if ($(i+1) == "openblasGFLOP/s") o = $i; if ($(i+1) == "ratio") q = $i }
		print p[2], substr(p[3], 2), w, o, q }' "$tmp/out" >>"$tmp/results"
	echo "# round $r/$rounds done" >&2
done
echo "# load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ ! -s "$tmp/results" ]; then
	echo "bench_sgemm_paired.sh: no sub-benchmark of BenchmarkSgemmPaired matches -bench '$bench'" >&2
	exit 2
fi

python3 - "$tmp/results" "$rounds" <<'PY'
import collections, statistics, sys
rows = collections.defaultdict(list)
order = []
for line in open(sys.argv[1]):
    shape, t, w, o, q = line.split()
    if (shape, t) not in order:
        order.append((shape, t))
    rows[shape, t].append((float(w), float(o), float(q)))
print(f"\nGFLOP/s per wall second and Wick/OpenBLAS per pair of calls (medians of {sys.argv[2]} rounds; ratio range over the rounds)")
print(f"{'shape':<18} {'layout':>6} {'threads':>7} {'Wick':>7} {'OpenBLAS':>9} {'ratio':>6} {'range':>11}")
for t in sorted({t for _, t in order}, key=int):
    for shape, tt in order:
        if tt != t:
            continue
        v = rows[shape, t]
        w, o = statistics.median(x[0] for x in v), statistics.median(x[1] for x in v)
        q = [x[2] for x in v]
        name, layout = (shape[:-2], shape[-2:]) if shape.startswith("gpt") else (shape, "NN")
        print(f"{name:<18} {layout:>6} {t:>7} {w:7.1f} {o:9.1f} {statistics.median(q):6.2f} {min(q):5.2f}-{max(q):.2f}")
PY
