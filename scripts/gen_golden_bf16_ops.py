#!/usr/bin/python3
"""Generate PyTorch's bfloat16 and float16 results for the cases of the op
goldens (scripts/gen_golden.py), for tensor/golden16_test.go.

Run with the system Python, which has PyTorch 1.13 (Debian's python3-torch):

    /usr/bin/python3 scripts/gen_golden_bf16_ops.py

It imports gen_golden.py and replays its case lists (same inputs, same view
steps, same arguments) with every float input rounded to the 16-bit dtype,
the op run on the 16-bit tensors on the CPU, a 16-bit upstream gradient per
output and the gradient of every 16-bit base (as PyTorch computes it: in
the base's dtype, accumulated in it where a tensor is used more than once;
EXTRA_OPS add cases of that). It writes testdata/golden/ops_bf16.json
(torch.bfloat16) and testdata/golden/ops_f16_bf16.json (torch.float16).

Beside PyTorch's 16-bit result each case holds the exact one where its bits
differ: the op and its derivative in float64 on the same 16-bit values
(scalar operands rounded to the dtype, as PyTorch converts them), each
output and gradient rounded once to the 16-bit dtype. PyTorch 1.13 has no
float16 CPU kernel for many ops (exp, log, tanh, softmax, layer_norm,
matmul, ...: "not implemented for 'Half'"); those cases hold the exact
result only and say "reference": "float64" (otherwise "torch"). Ops that
only create tensors (Arange, Eye, Linspace) have no float input and are
left out.

Tensors are {"dtype", "shape", "bits"} with bits the little-endian bit
patterns in base64 (uint16 for the 16-bit dtypes, uint32 for float32), or
{"dtype": "int64", "shape", "data"} with a list of ints.
"""

import base64
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_golden as G  # noqa: E402

torch.set_num_threads(1)

DTYPES = {
    "bfloat16": (torch.bfloat16, os.path.join(G.GOLDEN, "ops_bf16.json")),
    "float16": (torch.float16, os.path.join(G.GOLDEN, "ops_f16_bf16.json")),
}

SKIP = {"Arange", "Eye", "Linspace"}  # no float input

DT = None      # the torch dtype of the cases being made
CASES = []
NAMES = set()
UP_RNG = None  # upstream gradients: a generator of their own


def enc(t):
    t = t.detach().contiguous()
    if t.dtype in (torch.int64, torch.int32, torch.bool):
        return {"dtype": "int64", "shape": list(t.shape), "data": [int(v) for v in t.reshape(-1).tolist()]}
    if t.dtype == torch.float32:
        raw = t.view(torch.int32).numpy().astype("<i4").tobytes()
        name = "float32"
    else:
        raw = t.view(torch.int16).numpy().astype("<i2").tobytes()
        name = {torch.bfloat16: "bfloat16", torch.float16: "float16"}[t.dtype]
    return {"dtype": name, "shape": list(t.shape), "bits": base64.b64encode(raw).decode()}


def scalars_of(op, args, dt):
    """The scalar arguments as the 16-bit op sees them: PyTorch converts a
    Python scalar operand (s, a clamp bound, a fill value) to the tensor's
    dtype; an exponent, eps and p stay as they are."""
    out = dict(args)
    for k in ("s", "lo", "hi", "value"):
        if k in out and isinstance(out[k], float) and op != "PowScalar":
            out[k] = float(torch.tensor(out[k], dtype=torch.float32).to(dt).double())
    return out


def run(op, inputs, args, dt, compute, ups=None):
    """Runs the op with its float inputs rounded to dt (the 16-bit dtype),
    computing in compute (dt itself, or float64 on dt's values). With ups
    (one upstream gradient or None per output) it runs backward too.
    Returns the bases and the outputs."""
    if compute == torch.float64:
        args = scalars_of(op, args, dt)
    bases, xs = [], []
    for x in inputs:
        if x.dtype == "float32":
            b = torch.tensor(x.data, dtype=torch.float32).reshape(x.shape).to(dt).to(compute)
            if x.grad:
                b.requires_grad_(True)
        else:
            b = torch.tensor(x.data, dtype=torch.int64).reshape(x.shape)
        bases.append(b)
        xs.append(G.apply_views(b, x.views))
    out = G.OPS[op](xs, args)
    outs = out if isinstance(out, list) else [out]
    if ups is not None:
        pairs = [(o, u.to(compute)) for o, u in zip(outs, ups) if u is not None]
        if pairs:
            torch.autograd.backward([o for o, _ in pairs], [u for _, u in pairs])
    return bases, outs, isinstance(out, list)


def draw_ups(outs, upstream, dt):
    return [None if not o.requires_grad else
            (torch.ones(o.shape) if upstream == "ones" else
             torch.tensor(UP_RNG.randn(*o.shape), dtype=torch.float32).reshape(o.shape)).to(dt)
            for o in outs]


COMPARISONS = ("Eq", "Ne", "Lt", "Le", "Gt", "Ge", "EqScalar", "GtScalar", "LtScalar")


def rounded(op, outs, dt):
    """The outputs of a float64 run as the 16-bit op gives them: float
    results rounded once to dt (comparisons stay float32 0/1)."""
    return [o.detach() if not o.dtype.is_floating_point else
            o.detach().float() if op in COMPARISONS else o.detach().to(dt) for o in outs]


def same_bits(a, b):
    return a["dtype"] == b["dtype"] and a.get("bits") == b.get("bits") and a.get("data") == b.get("data")


def case(name, op, inputs, upstream="random", ref64=False, **args):
    assert op in G.OPS, op
    if op in SKIP:
        return
    name = op + "/" + name
    assert name not in NAMES, name
    NAMES.add(name)
    dt = DT
    # the exact reference: the op in float64 on the 16-bit values, each
    # result rounded once; its shapes give the upstream gradients
    _, outs64, multi = run(op, inputs, args, dt, torch.float64)
    ups = draw_ups(outs64, upstream, dt)
    bases64, outs64, _ = run(op, inputs, args, dt, torch.float64, ups)
    exact = rounded(op, outs64, dt)
    reference = "torch"
    try:
        bases, outs, _ = run(op, inputs, args, dt, dt, ups)
        for o in outs:
            if o.dtype.is_floating_point and o.dtype not in (dt, torch.float32):
                raise RuntimeError("output dtype %s not implemented for %s" % (o.dtype, dt))
    except RuntimeError as e:
        if "not implemented for" not in str(e):
            raise
        reference = "float64"  # no 16-bit kernel in torch: the exact reference
        bases, outs = bases64, exact
    c = {
        "name": name,
        "op": op,
        "kind": G.KIND[op],
        "reference": reference,
        "args": {k: (G.f32list([v])[0] if isinstance(v, float) else v) for k, v in args.items()},
        "inputs": [],
        "outputs": [enc(o) for o in outs],
        "multi": multi,
    }
    ex = [enc(o) for o in exact]
    if any(not same_bits(a, b) for a, b in zip(ex, c["outputs"])):
        c["exact_outputs"] = [None if same_bits(a, b) else a for a, b in zip(ex, c["outputs"])]
    backward = any(u is not None for u in ups)
    if backward:
        c["upstream"] = [None if u is None else enc(u) for u in ups]
    for x, b, b64 in zip(inputs, bases, bases64):
        if x.dtype == "float32":
            ij = enc(torch.tensor(x.data, dtype=torch.float32).reshape(x.shape).to(dt))
        else:
            ij = enc(torch.tensor(x.data, dtype=torch.int64).reshape(x.shape))
        if x.grad:
            ij["requires_grad"] = True
        if x.views:
            ij["views"] = x.views
        if x.grad and backward:
            ij["grad"] = None if b.grad is None else enc(b.grad.to(dt))
            e = None if b64.grad is None else enc(b64.grad.to(dt))
            if e is not None and ij["grad"] is not None and not same_bits(e, ij["grad"]):
                ij["exact_grad"] = e
        c["inputs"].append(ij)
    CASES.append(c)


# Gradient accumulation in the 16-bit dtype, as PyTorch's engine does it:
# a tensor used more than once gets the sum of its gradients, each rounded,
# and each sum rounded (a leaf's Grad and a non-leaf's buffer alike).
EXTRA_OPS = {
    "LeafTwice": lambda xs, a: xs[0] * xs[1] + xs[0] * xs[2],
    "LeafThrice": lambda xs, a: xs[0] * xs[1] + xs[0] * xs[2] + (xs[0] * xs[3]).sum(0),
    "NonLeafTwice": lambda xs, a: (lambda h: h * xs[1] + (h * xs[2]).sin())(xs[0].exp()),
}


def accumulation_cases():
    r = G.randn
    case("basic", "LeafTwice", [r(3, 4), r(3, 4), r(3, 4)])
    case("bcast", "LeafTwice", [r(4), r(3, 4), r(2, 1, 4)])
    case("basic", "LeafThrice", [r(3, 4), r(3, 4), r(3, 4), r(5, 3, 4)])
    case("basic", "NonLeafTwice", [r(3, 4), r(3, 4), r(3, 4)])


def write(path, dtname, cases):
    doc = {"generator": "scripts/gen_golden_bf16_ops.py", "torch": torch.__version__, "dtype": dtname, "cases": cases}
    with open(path, "w") as f:
        json.dump(doc, f, separators=(",", ":"), allow_nan=False)
        f.write("\n")
    n64 = sum(c["reference"] == "float64" for c in cases)
    print("wrote %d cases to %s (%d bytes; %d from float64 where torch has no %s kernel: %s)" % (
        len(cases), os.path.relpath(path), os.path.getsize(path), n64, dtname,
        ", ".join(sorted({c["op"] for c in cases if c["reference"] == "float64"}))), file=sys.stderr)


def measure():
    """Prints, per op, the fraction of bfloat16 results that differ from
    the float32 op on the same values rounded once (random 7×13 inputs,
    100 draws): which of PyTorch 1.13's bfloat16 CPU ops round once
    (testdata/golden/COVERAGE.md quotes these)."""
    import torch.nn.functional as F
    g = torch.Generator().manual_seed(0)
    bf = torch.bfloat16
    ops = {
        "sum": lambda x: x.sum(1), "mean": lambda x: x.mean(1), "amax": lambda x: x.amax(1),
        "var": lambda x: x.var(1), "logsumexp": lambda x: x.logsumexp(1),
        "cumsum": lambda x: x.cumsum(1), "cumprod": lambda x: x.cumprod(1),
        "softmax": lambda x: x.softmax(1), "log_softmax": lambda x: x.log_softmax(1),
        "layer_norm": lambda x: F.layer_norm(x, (x.shape[-1],)),
        "cross_entropy": lambda x: F.cross_entropy(x, torch.arange(x.shape[0]) % x.shape[1]).reshape(1),
        "exp": torch.exp, "sin": torch.sin, "tanh": torch.tanh, "rsqrt": lambda x: x.abs().rsqrt(),
        "gelu": F.gelu, "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    }
    for name, f in ops.items():
        n = differ = 0
        for _ in range(100):
            x = torch.randn(7, 13, generator=g).to(bf)
            y, want = f(x), f(x.float()).to(bf)
            n += y.numel()
            differ += int((y.view(torch.int16) != want.view(torch.int16)).sum())
        print("bfloat16 %-13s differs from float32 rounded once in %5.1f%% of %d results" % (name, 100.0 * differ / n, n),
              file=sys.stderr)


def main():
    global DT, UP_RNG
    G.case = case  # the case lists call gen_golden's case by its global name
    G.OPS.update(EXTRA_OPS)
    G.KIND.update({op: "elementwise" for op in EXTRA_OPS})
    for dtname, (dt, path) in DTYPES.items():
        DT = dt
        CASES.clear()
        NAMES.clear()
        UP_RNG = np.random.RandomState(1602)
        G.RNG = np.random.RandomState(2)
        for f in (G.unary_cases, G.scalar_cases, G.binary_cases, G.compare_cases, G.where_cases,
                  G.reduce_cases, G.matmul_cases, G.nn_cases, G.view_cases):
            f()
        G.RNG = np.random.RandomState(26)
        G.sort_gather_scan_cases()
        G.RNG = np.random.RandomState(28)
        accumulation_cases()
        write(path, dtname, list(CASES))
    measure()


if __name__ == "__main__":
    main()
