#!/usr/bin/python3
"""sgemm peer for Wick's internal/blas benchmarks: numpy on OpenBLAS.

Run with /usr/bin/python3 (the interpreter that has numpy). The thread count
and OpenBLAS kernel are fixed by the environment before numpy is imported:

    OPENBLAS_CORETYPE=Haswell OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 \
        /usr/bin/python3 scripts/bench_sgemm_peer.py

(Debian's OpenBLAS misdetects some AMD CPUs and runs SSE3 kernels without the
CORETYPE export. SkylakeX's kernels need AVX-512 and die with "Illegal
instruction" without it; on an AVX2-only CPU use Haswell, as
scripts/bench_sgemm.sh does.)
Prints one line per shape: name, GFLOP/s per second of wall time, and GFLOP/s
per second of the process's CPU time (meaningful with one thread: OpenBLAS's
threads spin while they wait), each the median of --runs timings of a batch
of calls lasting about --seconds.
The shapes mirror BenchmarkSgemm in internal/blas/bench_test.go.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

SHAPES = [
    # name, m, k, n, transA, transB
    ("sq64", 64, 64, 64, False, False),
    ("sq256", 256, 256, 256, False, False),
    ("sq512", 512, 512, 512, False, False),
    ("sq1024", 1024, 1024, 1024, False, False),
    ("gpt768x128x512NT", 768, 128, 512, False, True),
    ("gpt768x128x512NN", 768, 128, 512, False, False),
    ("gpt768x128x512TN", 768, 128, 512, True, False),
    ("gpt768x128x512TT", 768, 128, 512, True, True),
    ("gpt768x512x128NT", 768, 512, 128, False, True),
    ("gpt768x512x128NN", 768, 512, 128, False, False),
    ("gpt512x768x128TN", 512, 768, 128, True, False),
]


def blas_name():
    """The BLAS library numpy loaded, read from the process's mappings."""
    try:
        with open("/proc/self/maps") as f:
            libs = {line.split()[-1] for line in f if "blas" in line.lower()}
        return ", ".join(sorted(os.path.basename(x) for x in libs)) or "unknown"
    except OSError:
        return "unknown"


def operand(rng, rows, cols, trans):
    """A rows×cols operand; when trans, a transposed view of a cols×rows
    array (numpy passes it to sgemm as a transposed operand, no copy)."""
    if trans:
        return rng.standard_normal((cols, rows), dtype=np.float32).T
    return rng.standard_normal((rows, cols), dtype=np.float32)


def measure(m, k, n, ta, tb, seconds, runs):
    """GFLOP/s per second of wall time and per second of process CPU time
    (medians over runs)."""
    rng = np.random.default_rng(1)
    a, b = operand(rng, m, k, ta), operand(rng, k, n, tb)
    c = np.empty((m, n), dtype=np.float32)
    np.matmul(a, b, out=c)
    flops = 2.0 * m * n * k
    # calls per timing so one timing lasts about `seconds`
    t0 = time.perf_counter()
    np.matmul(a, b, out=c)
    one = max(time.perf_counter() - t0, 1e-7)
    reps = max(1, int(seconds / one))
    wall, cpu = [], []
    for _ in range(runs):
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(reps):
            np.matmul(a, b, out=c)
        wall.append(flops * reps / (time.perf_counter() - t0) / 1e9)
        cpu.append(flops * reps / max(time.process_time() - c0, 1e-9) / 1e9)
    return statistics.median(wall), statistics.median(cpu)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=0.3, help="length of one timing")
    ap.add_argument("--runs", type=int, default=5, help="timings per shape (median reported)")
    ap.add_argument("--only", default="", help="comma-separated shape names")
    ap.add_argument("--list", action="store_true", help="print the shape names and exit")
    args = ap.parse_args()
    if args.list:
        print("\n".join(name for name, *_ in SHAPES))
        return
    only = set(filter(None, args.only.split(",")))
    print(f"# numpy {np.__version__}, BLAS {blas_name()}, "
          f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '')}, "
          f"threads={os.environ.get('OPENBLAS_NUM_THREADS', '')}", file=sys.stderr)
    for name, m, k, n, ta, tb in SHAPES:
        if only and name not in only:
            continue
        wall, cpu = measure(m, k, n, ta, tb, args.seconds, args.runs)
        print(f"{name} {wall:.2f} {cpu:.2f}", flush=True)


if __name__ == "__main__":
    main()
