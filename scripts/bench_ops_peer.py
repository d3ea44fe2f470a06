#!/usr/bin/python3
"""Times in PyTorch the same operations as Wick's tensor benchmarks
(tensor/bench_test.go), for scripts/bench_ops.sh.

Run with Debian's interpreter, which has torch (the python3 first on PATH may
not), and with OPENBLAS_CORETYPE=SkylakeX so that OpenBLAS uses its fast
kernels (Debian's OpenBLAS misdetects this CPU); on a CPU without AVX-512 the
script switches to Haswell, since SkylakeX kernels would die with SIGILL:

    OPENBLAS_CORETYPE=SkylakeX /usr/bin/python3 scripts/bench_ops_peer.py --threads 1

Output lines have the format of `go test -bench`, one per repetition:

    BenchmarkMatMul/64  <iterations>  <ns> ns/op  <rate> GFLOP/s
"""

import argparse
import os
import re
import sys
import time



def pick_coretype():
    """Sets OPENBLAS_CORETYPE before torch loads OpenBLAS: SkylakeX unless
    the environment says otherwise, but Haswell (AVX2) on CPUs without
    AVX-512, where SkylakeX kernels die with SIGILL."""
    want = os.environ.get("OPENBLAS_CORETYPE") or "SkylakeX"
    try:
        with open("/proc/cpuinfo") as f:
            flags = f.read()
    except OSError:
        flags = ""
    if want.lower() == "skylakex" and flags and "avx512f" not in flags:
        print("note: this CPU has no AVX-512; using OPENBLAS_CORETYPE=Haswell instead of SkylakeX",
              file=sys.stderr)
        want = "Haswell"
    os.environ["OPENBLAS_CORETYPE"] = want


pick_coretype()

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402


def cases():
    """Yields (name, fn, flops, bytes) with the shapes of bench_test.go."""
    torch.manual_seed(1)
    for n in (64, 256, 1024):
        a, b = torch.randn(n, n), torch.randn(n, n)
        yield f"MatMul/{n}", (lambda a=a, b=b: a @ b), 2 * n * n * n, 0
    x, w, g = torch.randn(768, 128), torch.randn(128, 512), torch.randn(768, 512)
    yield "MatMulGPT/768x128*128x512", lambda: x @ w, 2 * 768 * 128 * 512, 0
    yield "MatMulGPT/AT*B=128x768*768x512", lambda: x.t() @ g, 2 * 768 * 128 * 512, 0
    yield "MatMulGPT/A*BT=768x512*512x128", lambda: g @ w.t(), 2 * 768 * 128 * 512, 0
    p, q = torch.randn(1024, 1024), torch.randn(1024, 1024)
    yield "Add", lambda: p + q, 0, 3 * 4 * 1024 * 1024
    # Wick's result released at once: what PyTorch's reference counting
    # does to p + q
    yield "AddRelease", lambda: p + q, 0, 3 * 4 * 1024 * 1024
    s = torch.randn(256, 4096)
    yield "Softmax", lambda: torch.softmax(s, -1), 0, 2 * 4 * 256 * 4096

    xm = torch.randn(64, 128)
    targets = torch.randint(0, 10, (64,))
    w1 = (torch.randn(128, 256) * 0.05).requires_grad_()
    b1 = torch.zeros(256, requires_grad=True)
    w2 = (torch.randn(256, 10) * 0.05).requires_grad_()
    b2 = torch.zeros(10, requires_grad=True)
    params = [w1, b1, w2, b2]

    def mlp():
        for t in params:
            t.grad = None
        h = F.gelu(xm @ w1 + b1)
        loss = F.cross_entropy(h @ w2 + b2, targets)
        loss.backward()

    mlp_flops = 2 * 64 * (128 * 256 + 256 * 10)
    yield "MLP", mlp, 3 * mlp_flops, 0

    def mlp_inference():
        with torch.no_grad():
            F.gelu(xm @ w1 + b1) @ w2 + b2

    yield "MLPInference", mlp_inference, mlp_flops, 0

    # The fixed cost per op on tiny tensors (BenchmarkSmallOps): a recorded
    # three-op forward and backward, and the same forward unrecorded.
    ones = torch.ones(3)

    def small_step():
        w = torch.ones(3, requires_grad=True)
        (w * ones + w).mean().backward()

    yield "SmallOps/forward+backward", small_step, 0, 0
    wsmall = torch.ones(3, requires_grad=True)

    def small_nograd():
        with torch.no_grad():
            (wsmall * ones + wsmall).mean()

    yield "SmallOps/forward-nograd", small_nograd, 0, 0


def measure(fn, benchtime):
    """Returns (iterations, ns/op) for a run of about benchtime seconds."""
    for _ in range(3):
        fn()
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t0
        if dt >= benchtime or n >= 1_000_000:
            return n, dt * 1e9 / n
        n = max(n + 1, min(int(n * benchtime / max(dt, 1e-9) * 1.2), n * 100))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1, help="torch.set_num_threads")
    ap.add_argument("--count", type=int, default=1, help="repetitions of each benchmark")
    ap.add_argument("--benchtime", type=float, default=0.5, help="seconds per repetition")
    ap.add_argument("--run", default="", help="only benchmarks whose name matches this regexp")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    print(f"# torch {torch.__version__}, threads {torch.get_num_threads()}, "
          f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '')}")
    for name, fn, flops, nbytes in cases():
        if args.run and not re.search(args.run, name):
            continue
        for _ in range(args.count):
            n, ns = measure(fn, args.benchtime)
            line = f"Benchmark{name}\t{n}\t{ns:.0f} ns/op"
            if flops:
                line += f"\t{flops / ns:.2f} GFLOP/s"
            if nbytes:
                line += f"\t{nbytes / ns:.3f} GB/s"
            print(line, flush=True)


if __name__ == "__main__":
    main()
