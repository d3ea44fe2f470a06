#!/usr/bin/python3
"""bf16 matmul peer for BenchmarkRecipeBF16 (internal/blas/recipe_bench_test.go):
PyTorch's torch.matmul on bfloat16 tensors (oneDNN inside PyTorch 1.13), at
the CPU recipe's products and GPT-2's shapes, in the same layouts (NT: the
second operand a transposed view, as x·Wᵀ; TN: the first).

    /usr/bin/python3 scripts/bench_bf16_matmul_peer.py [--threads 1 2] [--seconds 0.2] [--runs 5]

Run it under flock /tmp/wick-bench.lock like the Go benchmark:

    flock /tmp/wick-bench.lock go test -run XXX -bench RecipeBF16 ./internal/blas/

Prints per thread count and shape: GFLOP/s per second of wall time and per
second of the process's CPU time, each the median of --runs batches lasting
about --seconds, and the float32 matmul's beside them.
"""
import argparse
import statistics
import time

import torch

SHAPES = [
    # name, m, k, n, transA, transB (as in recipeShapes and gpt2Shapes)
    ("qk64x32x64NT", 64, 32, 64, False, True),
    ("dv64x64x32TN", 64, 64, 32, True, False),
    ("av64x64x32NN", 64, 64, 32, False, False),
    ("fc768x128x512NT", 768, 128, 512, False, True),
    ("fcdx768x512x128NN", 768, 512, 128, False, False),
    ("attn768x128x384NT", 768, 128, 384, False, True),
    ("proj768x512x128NT", 768, 512, 128, False, True),
    ("projdx768x128x512NN", 768, 128, 512, False, False),
    ("attndx768x384x128NN", 768, 384, 128, False, False),
    ("aproj768x128x128NT", 768, 128, 128, False, True),
    ("aprojdx768x128x128NN", 768, 128, 128, False, False),
    ("projdw128x768x512TN", 128, 768, 512, True, False),
    ("fcdw512x768x128TN", 512, 768, 128, True, False),
    ("attndw384x768x128TN", 384, 768, 128, True, False),
    ("aprojdw128x768x128TN", 128, 768, 128, True, False),
    ("head768x128x65NT", 768, 128, 65, False, True),
    ("headdx768x65x128NN", 768, 65, 128, False, False),
    ("headdw65x768x128TN", 65, 768, 128, True, False),
    ("gpt2attn1024x768x2304NT", 1024, 768, 2304, False, True),
    ("gpt2fc1024x768x3072NT", 1024, 768, 3072, False, True),
    ("gpt2proj1024x3072x768NT", 1024, 3072, 768, False, True),
    ("gpt2aproj1024x768x768NT", 1024, 768, 768, False, True),
    ("gpt2qk1024x64x1024NT", 1024, 64, 1024, False, True),
    ("gpt2av1024x1024x64NN", 1024, 1024, 64, False, False),
]


def operand(rows, cols, trans, dtype):
    """A rows×cols operand, a transposed view of a cols×rows tensor if trans."""
    if trans:
        return torch.randn(cols, rows).to(dtype).t()
    return torch.randn(rows, cols).to(dtype)


def time_batch(f, seconds):
    """Calls f about seconds' worth; returns (wall, cpu) seconds per call."""
    n = 1
    while True:
        w0, c0 = time.perf_counter(), time.process_time()
        for _ in range(n):
            f()
        w, c = time.perf_counter() - w0, time.process_time() - c0
        if w >= seconds:
            return w / n, c / n
        n *= 2


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--seconds", type=float, default=0.2)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    print("torch", torch.__version__, "mkldnn bf16:", torch.backends.mkldnn.is_available())
    for th in args.threads:
        torch.set_num_threads(th)
        for name, m, k, n, ta, tb in SHAPES:
            flops = 2.0 * m * n * k
            line = ["threads=%d" % th, name]
            for dt in (torch.bfloat16, torch.float32):
                a, b = operand(m, k, ta, dt), operand(k, n, tb, dt)
                out = torch.empty(m, n, dtype=dt)
                f = lambda: torch.matmul(a, b, out=out)
                f()
                ws, cs = [], []
                for _ in range(args.runs):
                    w, c = time_batch(f, args.seconds)
                    ws.append(w)
                    cs.append(c)
                w, c = statistics.median(ws), statistics.median(cs)
                tag = "bf16" if dt == torch.bfloat16 else "fp32"
                line.append("%s %.1f GFLOP/s %.1f cpuGFLOP/s" % (tag, flops / w / 1e9, flops / c / 1e9 if c > 0 else 0))
            print("  ".join(line), flush=True)


if __name__ == "__main__":
    main()
