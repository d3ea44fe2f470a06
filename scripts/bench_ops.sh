#!/usr/bin/env bash
# bench_ops.sh runs Wick's tensor benchmarks (tensor/bench_test.go) and the
# same operations in PyTorch (scripts/bench_ops_peer.py, with 1 and 2
# threads, OPENBLAS_CORETYPE=SkylakeX or Haswell on CPUs without AVX-512),
# and prints a side-by-side table of median times with ratios.
#
# Usage: scripts/bench_ops.sh [-count N] [-benchtime SECONDS] [-run REGEXP]
#   -count      repetitions of each benchmark (default 3)
#   -benchtime  seconds per repetition (default 0.3)
#   -run        Go -bench regexp (default: all of them)
#
# Needs Go and /usr/bin/python3 with torch (Debian's python3-torch). If
# benchstat is installed (go install golang.org/x/perf/cmd/benchstat@latest)
# it also summarises the Go results with confidence intervals.
set -euo pipefail

count=3
benchtime=0.3
run='.'
while [ $# -gt 0 ]; do
	case "$1" in
	-count) count="$2"; shift 2 ;;
	-benchtime) benchtime="$2"; shift 2 ;;
	-run) run="$2"; shift 2 ;;
	-h | --help) sed -n '2,14p' "$0"; exit 0 ;;
	*) echo "bench_ops.sh: unknown argument $1 (see -h)" >&2; exit 2 ;;
	esac
done

cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "== Wick (go test -bench, GOMAXPROCS=$(nproc))" >&2
go test ./tensor/ -run '^$' -bench "$run" -benchtime "${benchtime}s" -count "$count" | tee "$tmp/wick.txt" >&2

for th in 1 2; do
	echo "== PyTorch, $th thread(s)" >&2
	OPENBLAS_CORETYPE="${OPENBLAS_CORETYPE:-SkylakeX}" OMP_NUM_THREADS=$th \
		/usr/bin/python3 scripts/bench_ops_peer.py --threads "$th" --count "$count" --benchtime "$benchtime" --run "$run" |
		tee "$tmp/torch$th.txt" >&2
done

benchstat=$(command -v benchstat || true)
if [ -z "$benchstat" ] && [ -x "$(go env GOPATH)/bin/benchstat" ]; then
	benchstat="$(go env GOPATH)/bin/benchstat"
fi
if [ -n "$benchstat" ]; then
	echo
	echo "== benchstat (Wick)"
	"$benchstat" "$tmp/wick.txt"
fi

echo
/usr/bin/python3 - "$tmp/wick.txt" "$tmp/torch1.txt" "$tmp/torch2.txt" <<'PY'
import re, statistics, sys

def load(path):
    """name -> (median ns/op, {unit: median rate})"""
    runs = {}
    for line in open(path):
        m = re.match(r"Benchmark(\S+?)(-\d+)?\s+\d+\s+([\d.]+) ns/op(.*)", line)
        if not m:
            continue
        name, ns, rest = m.group(1), float(m.group(3)), m.group(4)
        rates = {u: float(v) for v, u in re.findall(r"([\d.]+) (GFLOP/s|GB/s)", rest)}
        runs.setdefault(name, []).append((ns, rates))
    out = {}
    for name, rs in runs.items():
        ns = statistics.median(r[0] for r in rs)
        units = {u for r in rs for u in r[1]}
        out[name] = (ns, {u: statistics.median(r[1][u] for r in rs if u in r[1]) for u in units})
    return out

wick, t1, t2 = (load(p) for p in sys.argv[1:4])

def fmt_time(ns):
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.1f} µs"
    return f"{ns:.0f} ns"

def fmt_rate(r):
    return " ".join(f"{v:.3g} {u}" for u, v in sorted(r.items()))

head = ("operation", "Wick", "rate", "torch 1T", "torch 2T", "Wick/torch1", "Wick/torch2")
rows = []
for name, (ns, rate) in wick.items():
    a = t1.get(name, (None, {}))[0]
    b = t2.get(name, (None, {}))[0]
    rows.append((name, fmt_time(ns), fmt_rate(rate),
                 fmt_time(a) if a else "-", fmt_time(b) if b else "-",
                 f"{ns / a:.2f}x" if a else "-", f"{ns / b:.2f}x" if b else "-"))
w = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
line = lambda r: "| " + " | ".join(c.ljust(w[i]) for i, c in enumerate(r)) + " |"
print(line(head))
print("|" + "|".join("-" * (x + 2) for x in w) + "|")
for r in rows:
    print(line(r))
print()
print("Times are medians per operation; Wick/torch > 1 means Wick is slower.")
PY
