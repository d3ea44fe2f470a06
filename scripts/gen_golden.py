#!/usr/bin/python3
"""Generate golden values for Wick's tensor ops from PyTorch.

Run with the system Python, which has PyTorch (Debian's python3-torch):

    /usr/bin/python3 scripts/gen_golden.py

It writes testdata/golden/ops.json and testdata/golden/ops_sort_gather_scan.json
(Linspace, Sort, TopK, Gather, Scatter, ScatterAdd, Cumsum, Cumprod, added
later: a file of their own, drawn from a generator of their own, so that
ops.json stays as it was), which tensor/golden_test.go reads. Every
case names an op (the same names are implemented in golden_test.go), its
inputs (a contiguous base plus the view steps that turn it into the strided
tensor the op receives), scalar arguments, the forward outputs and, for a
fixed random upstream gradient g per output (loss = sum((out * g).sum())),
the gradient of every base that requires one.

View steps, applied in order to the base on both sides:
    {"permute": dims}  {"transpose": [d0, d1]}  {"slice": [dim, start, end]}
    {"expand": shape}  {"select": [dim, index]}  {"view": shape}

Floats that JSON cannot hold are written as the strings "NaN", "Infinity" and
"-Infinity". Values are float32, written in their shortest round-trip form.
"""

import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testdata", "golden")
OUT = os.path.join(GOLDEN, "ops.json")
OUT_SORT_GATHER_SCAN = os.path.join(GOLDEN, "ops_sort_gather_scan.json")

# --------------------------------------------------------------------------
# ops: name -> f(inputs, args) returning a tensor or a list of tensors.
# golden_test.go has a table with the same names.


def _dims(x, args):
    d = args.get("dims", [])
    return tuple(d) if d else tuple(range(x.dim()))


def _reduce(fn_dims, fn_all):
    def f(xs, a):
        x = xs[0]
        keep = a.get("keep", False)
        if x.dim() == 0:
            return fn_all(x)
        return fn_dims(x, _dims(x, a), keep)
    return f


def _arg(fn):
    def f(xs, a):
        x = xs[0]
        if a.get("dim") is None:
            return fn(x.reshape(-1), 0, False).reshape(())
        return fn(x, a["dim"], a.get("keep", False))
    return f


def _sdpa(xs, a):
    q, k, v = xs
    d = q.shape[-1]
    att = q @ k.transpose(-2, -1) / math.sqrt(d)
    if a["causal"]:
        T, S = att.shape[-2], att.shape[-1]
        mask = torch.ones(T, S).triu(1).bool()
        att = att.masked_fill(mask, float("-inf"))
    return att.softmax(-1) @ v


def _ce(xs, a):
    logits, targets = xs
    c = logits.shape[-1]
    ig = a.get("ignore")
    if ig is None:
        return F.cross_entropy(logits.reshape(-1, c), targets.reshape(-1))
    return F.cross_entropy(logits.reshape(-1, c), targets.reshape(-1), ignore_index=ig)


def _issue_view_permute(xs, a):
    # issue 2: q = k = arange(4).view(2,2); loss = (q @ k.T).sum()
    q = xs[0].view(2, 2)
    k = q
    return (q @ k.T).sum()


def _fanout(xs, a):
    # one tensor used several times, through views: gradients must accumulate
    x = xs[0]
    y = x.view(-1)
    z = x.t()
    return x * x + x.exp() * x + (y.view(x.shape) * z.t()).sin()


def _offset_pieces(xs, a):
    # split along dim 0 gives views at nonzero offsets; cat's backward hands
    # each piece a gradient view at a nonzero offset
    p = xs[0].split(2, 0)
    y = torch.cat([p[0].exp(), p[1].softmax(-1), F.layer_norm(p[2], (p[2].shape[-1],))], 0)
    return y.tanh()


def _attention_block(xs, a):
    # a small transformer-style chain: layer norm, projection, split heads,
    # causal attention, merge heads, residual
    x, w, wln, bln = xs
    B, T, C = x.shape
    h = a["heads"]
    y = F.layer_norm(x, (C,), wln, bln, 1e-5)
    qkv = y @ w
    q, k, v = qkv.split(C, dim=2)
    q = q.view(B, T, h, C // h).transpose(1, 2)
    k = k.view(B, T, h, C // h).transpose(1, 2)
    v = v.view(B, T, h, C // h).transpose(1, 2)
    o = _sdpa([q, k, v], {"causal": True})
    o = o.transpose(1, 2).contiguous().view(B, T, C)
    return F.gelu(o + x)


def _topk_ties(xs, a):
    # with ties PyTorch's CPU topk picks no particular index among equal
    # values: compare the values and what the indices pick
    x = xs[0]
    v, i = x.topk(a["k"], a["dim"], a["largest"], True)
    return [v, x.gather(a["dim"], i)]


OPS = {
    # unary
    "Neg": lambda xs, a: -xs[0],
    "Exp": lambda xs, a: xs[0].exp(),
    "Log": lambda xs, a: xs[0].log(),
    "Sqrt": lambda xs, a: xs[0].sqrt(),
    "Rsqrt": lambda xs, a: xs[0].rsqrt(),
    "Abs": lambda xs, a: xs[0].abs(),
    "Sign": lambda xs, a: xs[0].sign(),
    "Square": lambda xs, a: xs[0].square(),
    "Tanh": lambda xs, a: xs[0].tanh(),
    "Sigmoid": lambda xs, a: xs[0].sigmoid(),
    "ReLU": lambda xs, a: xs[0].relu(),
    "GELU": lambda xs, a: F.gelu(xs[0]),
    "GELUTanh": lambda xs, a: F.gelu(xs[0], approximate="tanh"),
    "Sin": lambda xs, a: xs[0].sin(),
    "Cos": lambda xs, a: xs[0].cos(),
    # scalar forms
    "AddScalar": lambda xs, a: xs[0] + a["s"],
    "SubScalar": lambda xs, a: xs[0] - a["s"],
    "RSubScalar": lambda xs, a: a["s"] - xs[0],
    "MulScalar": lambda xs, a: xs[0] * a["s"],
    "DivScalar": lambda xs, a: xs[0] / a["s"],
    "PowScalar": lambda xs, a: xs[0] ** a["s"],
    "Clamp": lambda xs, a: xs[0].clamp(a["lo"], a["hi"]),
    "EqScalar": lambda xs, a: (xs[0] == a["s"]).float(),
    "GtScalar": lambda xs, a: (xs[0] > a["s"]).float(),
    "LtScalar": lambda xs, a: (xs[0] < a["s"]).float(),
    # binary
    "Add": lambda xs, a: xs[0] + xs[1],
    "Sub": lambda xs, a: xs[0] - xs[1],
    "Mul": lambda xs, a: xs[0] * xs[1],
    "Div": lambda xs, a: xs[0] / xs[1],
    "Pow": lambda xs, a: xs[0] ** xs[1],
    "Maximum": lambda xs, a: torch.maximum(xs[0], xs[1]),
    "Minimum": lambda xs, a: torch.minimum(xs[0], xs[1]),
    "Eq": lambda xs, a: (xs[0] == xs[1]).float(),
    "Ne": lambda xs, a: (xs[0] != xs[1]).float(),
    "Lt": lambda xs, a: (xs[0] < xs[1]).float(),
    "Le": lambda xs, a: (xs[0] <= xs[1]).float(),
    "Gt": lambda xs, a: (xs[0] > xs[1]).float(),
    "Ge": lambda xs, a: (xs[0] >= xs[1]).float(),
    "Where": lambda xs, a: torch.where(xs[0] != 0, xs[1], xs[2]),
    "MaskedFill": lambda xs, a: xs[0].masked_fill(xs[1] != 0, a["value"]),
    # reductions (dims [] = all elements)
    "Sum": _reduce(lambda x, d, k: x.sum(dim=d, keepdim=k), lambda x: x.sum()),
    "Mean": _reduce(lambda x, d, k: x.mean(dim=d, keepdim=k), lambda x: x.mean()),
    "Max": _reduce(lambda x, d, k: torch.amax(x, dim=d, keepdim=k), lambda x: x.max()),
    "Min": _reduce(lambda x, d, k: torch.amin(x, dim=d, keepdim=k), lambda x: x.min()),
    "Var": _reduce(lambda x, d, k: x.var(dim=d, unbiased=True, keepdim=k), lambda x: x.var()),
    "LogSumExp": _reduce(lambda x, d, k: torch.logsumexp(x, dim=d, keepdim=k), lambda x: x.logsumexp(0)),
    "ArgMax": _arg(lambda x, d, k: x.argmax(dim=d, keepdim=k)),
    "ArgMin": _arg(lambda x, d, k: x.argmin(dim=d, keepdim=k)),
    # linear algebra
    "MatMul": lambda xs, a: xs[0] @ xs[1],
    # nn
    "Softmax": lambda xs, a: xs[0].softmax(a["dim"]),
    "LogSoftmax": lambda xs, a: xs[0].log_softmax(a["dim"]),
    "LayerNorm": lambda xs, a: F.layer_norm(
        xs[0], (xs[0].shape[-1],),
        xs[1] if a.get("weight") else None,
        xs[2 if a.get("weight") else 1] if a.get("bias") else None,
        a["eps"]),
    "Dropout": lambda xs, a: F.dropout(xs[0], a["p"], a["training"]),
    "IndexSelect": lambda xs, a: xs[0].index_select(a["dim"], xs[1]),
    "Embedding": lambda xs, a: F.embedding(xs[1], xs[0]),
    "CrossEntropy": _ce,
    "Tril": lambda xs, a: xs[0].tril(a["k"]),
    "Triu": lambda xs, a: xs[0].triu(a["k"]),
    "Cat": lambda xs, a: torch.cat(xs, a["dim"]),
    "Stack": lambda xs, a: torch.stack(xs, a["dim"]),
    "Split": lambda xs, a: list(xs[0].split(a["size"], a["dim"])),
    "Chunk": lambda xs, a: list(xs[0].chunk(a["n"], a["dim"])),
    "ScaledDotProductAttention": _sdpa,
    # views and copies
    "Reshape": lambda xs, a: xs[0].reshape(a["shape"]),
    "View": lambda xs, a: xs[0].view(a["shape"]),
    "Permute": lambda xs, a: xs[0].permute(a["dims"]),
    "Transpose": lambda xs, a: xs[0].transpose(a["d0"], a["d1"]),
    "T": lambda xs, a: xs[0].permute(list(range(xs[0].dim() - 1, -1, -1))),
    "Slice": lambda xs, a: xs[0].narrow(a["dim"], *_py_slice(xs[0].shape[a["dim"]], a["start"], a["end"])),
    "Narrow": lambda xs, a: xs[0].narrow(a["dim"], a["start"], a["length"]),
    "Select": lambda xs, a: xs[0].select(a["dim"], a["index"]),
    "Expand": lambda xs, a: xs[0].expand(a["shape"]),
    "Squeeze": lambda xs, a: _squeeze(xs[0], a.get("dims", [])),
    "Unsqueeze": lambda xs, a: xs[0].unsqueeze(a["dim"]),
    "Flatten": lambda xs, a: xs[0].flatten(*a.get("range", [])),
    "Contiguous": lambda xs, a: xs[0].contiguous(),
    "Clone": lambda xs, a: xs[0].clone(),
    # creation
    "Arange": lambda xs, a: torch.arange(a["start"], a["end"], a["step"], dtype=torch.float32),
    "Eye": lambda xs, a: torch.eye(a["n"]),
    # sorting, indexing along a dim, scans (ops_sort_gather_scan.json)
    "Linspace": lambda xs, a: torch.linspace(a["start"], a["end"], a["steps"]),
    "Sort": lambda xs, a: list(torch.sort(xs[0], dim=a["dim"], descending=a["descending"], stable=True)),
    "TopK": lambda xs, a: list(xs[0].topk(a["k"], a["dim"], a["largest"], True)),
    "TopKTies": _topk_ties,
    "Gather": lambda xs, a: xs[0].gather(a["dim"], xs[1]),
    "Scatter": lambda xs, a: xs[0].scatter(a["dim"], xs[1], xs[2]),
    "ScatterAdd": lambda xs, a: xs[0].scatter_add(a["dim"], xs[1], xs[2]),
    "Cumsum": lambda xs, a: xs[0].cumsum(a["dim"]),
    "Cumprod": lambda xs, a: xs[0].cumprod(a["dim"]),
    # composites
    "IssueViewPermute": _issue_view_permute,
    "FanOut": _fanout,
    "OffsetPieces": _offset_pieces,
    "AttentionBlock": _attention_block,
}

# How the Go test compares each op: elementwise tolerances or the looser ones
# for reductions, matmuls and nn ops.
KIND = {}
for n in ["Neg", "Exp", "Log", "Sqrt", "Rsqrt", "Abs", "Sign", "Square", "Tanh", "Sigmoid", "ReLU",
          "GELU", "GELUTanh", "Sin", "Cos", "AddScalar", "SubScalar", "RSubScalar", "MulScalar",
          "DivScalar", "PowScalar", "Clamp", "EqScalar", "GtScalar", "LtScalar", "Add", "Sub", "Mul",
          "Div", "Pow", "Maximum", "Minimum", "Eq", "Ne", "Lt", "Le", "Gt", "Ge", "Where",
          "MaskedFill", "Tril", "Triu", "Cat", "Stack", "Split", "Chunk", "Dropout", "FanOut",
          "Arange", "Eye", "Linspace", "Sort", "TopK", "TopKTies", "Gather", "Scatter", "ScatterAdd"]:
    KIND[n] = "elementwise"
for n in ["Reshape", "View", "Permute", "Transpose", "T", "Slice", "Narrow", "Select", "Expand",
          "Squeeze", "Unsqueeze", "Flatten", "Contiguous", "Clone"]:
    KIND[n] = "view"
for n in ["Sum", "Mean", "Max", "Min", "Var", "LogSumExp", "ArgMax", "ArgMin", "Cumsum", "Cumprod"]:
    KIND[n] = "reduce"
for n in ["MatMul", "IssueViewPermute"]:
    KIND[n] = "matmul"
for n in ["Softmax", "LogSoftmax", "LayerNorm", "IndexSelect", "Embedding", "CrossEntropy",
          "ScaledDotProductAttention", "AttentionBlock"]:
    KIND[n] = "nn"
KIND["OffsetPieces"] = "nn"


def _py_slice(n, start, end):
    s, e, _ = slice(start, end).indices(n)
    return s, max(e - s, 0)


def _squeeze(x, dims):
    if not dims:
        return x.squeeze()
    for d in sorted([d % x.dim() for d in dims], reverse=True):
        x = x.squeeze(d)
    return x


# --------------------------------------------------------------------------
# inputs

class In:
    """An input: a base tensor (data, shape, dtype) and view steps."""

    def __init__(self, shape, data, dtype="float32", grad=True, views=()):
        self.shape = list(shape)
        self.data = np.asarray(data, dtype=np.float32 if dtype == "float32" else np.int64).reshape(-1)
        assert self.data.size == int(np.prod(self.shape)), (shape, self.data.size)
        self.dtype = dtype
        self.grad = grad and dtype == "float32"
        self.views = list(views)


RNG = np.random.RandomState(2)


def randn(*shape, grad=True, views=(), scale=1.0):
    return In(shape, RNG.randn(*shape) * scale, grad=grad, views=views)


def uniform(lo, hi, *shape, grad=True, views=()):
    return In(shape, RNG.uniform(lo, hi, size=shape), grad=grad, views=views)


def values(vals, shape=None, grad=True, views=()):
    vals = np.asarray(vals, dtype=np.float32)
    return In(shape if shape is not None else vals.shape, vals, grad=grad, views=views)


def ints(vals, shape=None, views=()):
    vals = np.asarray(vals, dtype=np.int64)
    return In(shape if shape is not None else vals.shape, vals, dtype="int64", grad=False, views=views)


def permuted(gen, shape, *a, **k):
    """A non-contiguous input of the given shape: the base has the reversed
    shape and is permuted back."""
    rev = list(reversed(shape))
    x = gen(*a, *rev, **k) if a else gen(*rev, **k)
    x.views = [{"permute": list(range(len(shape) - 1, -1, -1))}] + x.views
    return x


def sliced(gen, shape, *a, dim=-1, **k):
    """A non-contiguous input of the given shape: the base is 3 larger along
    dim and sliced."""
    shape = list(shape)
    d = dim % len(shape)
    big = list(shape)
    big[d] += 3
    x = gen(*a, *big, **k) if a else gen(*big, **k)
    x.views = [{"slice": [d, 1, 1 + shape[d]]}] + x.views
    return x


def offset(gen, shape, *a, **k):
    """A contiguous input that starts at a nonzero storage offset: the base
    has 2 more rows and is sliced along dim 0."""
    big = list(shape)
    big[0] += 2
    x = gen(*a, *big, **k) if a else gen(*big, **k)
    x.views = [{"slice": [0, 1, 1 + shape[0]]}] + x.views
    return x


def expanded(gen, shape, dim, *a, **k):
    """An input with a stride-0 dimension: the base has size 1 at dim."""
    small = list(shape)
    small[dim] = 1
    x = gen(*a, *small, **k) if a else gen(*small, **k)
    x.views = [{"expand": list(shape)}] + x.views
    return x


def apply_views(x, views):
    for v in views:
        (k, p), = v.items()
        if k == "permute":
            x = x.permute(p)
        elif k == "transpose":
            x = x.transpose(*p)
        elif k == "slice":
            d, s, e = p
            x = x.narrow(d, *_py_slice(x.shape[d], s, e))
        elif k == "expand":
            x = x.expand(p)
        elif k == "select":
            x = x.select(*p)
        elif k == "view":
            x = x.view(p)
        else:
            raise ValueError(k)
    return x


# --------------------------------------------------------------------------
# cases

CASES = []
NAMES = set()


def f32list(a):
    out = []
    for v in np.asarray(a, dtype=np.float32).reshape(-1).tolist():
        if math.isnan(v):
            out.append("NaN")
        elif math.isinf(v):
            out.append("Infinity" if v > 0 else "-Infinity")
        else:
            # shortest decimal that round-trips the float32
            out.append(float(repr(np.float32(v))))
    return out


def tensor_json(t):
    t = t.detach()
    if t.dtype in (torch.int64, torch.int32, torch.bool):
        return {"dtype": "int64", "shape": list(t.shape), "data": [int(v) for v in t.reshape(-1).tolist()]}
    return {"dtype": "float32", "shape": list(t.shape), "data": f32list(t.reshape(-1).numpy())}


def case(name, op, inputs, upstream="random", ref64=False, **args):
    """Record one case. With ref64 the op runs in float64 and the results are
    rounded to float32: for ill-conditioned inputs where float32 PyTorch is
    itself inaccurate (Wick accumulates in float64 there)."""
    assert op in OPS, op
    name = op + "/" + name
    assert name not in NAMES, name
    NAMES.add(name)
    bases, xs = [], []
    for x in inputs:
        if x.dtype == "float32":
            b = torch.tensor(x.data, dtype=torch.float64 if ref64 else torch.float32).reshape(x.shape)
        else:
            b = torch.tensor(x.data, dtype=torch.int64).reshape(x.shape)
        if x.grad:
            b.requires_grad_(True)
        bases.append(b)
        xs.append(apply_views(b, x.views))
    out = OPS[op](xs, args)
    outs = out if isinstance(out, list) else [out]
    ups, loss = [], None
    for o in outs:
        if o.requires_grad:
            if upstream == "ones":
                g = torch.ones(o.shape)
            else:
                g = torch.tensor(RNG.randn(*o.shape), dtype=torch.float32).reshape(o.shape).to(o.dtype)
            ups.append(f32list(g.detach().numpy()))
            term = (o * g).sum()
            loss = term if loss is None else loss + term
        else:
            ups.append(None)
    if loss is not None:
        loss.backward()
    shares = None
    if KIND[op] == "view":
        ptr = xs[0].storage().data_ptr()
        shares = [None if o.numel() == 0 else o.storage().data_ptr() == ptr for o in outs]
    c = {
        "name": name,
        "op": op,
        "kind": KIND[op],
        "args": {k: (f32list([v])[0] if isinstance(v, float) else v) for k, v in args.items()},
        "inputs": [],
        "outputs": [tensor_json(o) for o in outs],
        "multi": isinstance(out, list),
    }
    if shares is not None:
        c["shares_storage"] = shares
    if any(u is not None for u in ups):
        c["upstream"] = ups
    for x, b, v in zip(inputs, bases, xs):
        ij = {"dtype": x.dtype, "shape": x.shape,
              "data": f32list(x.data) if x.dtype == "float32" else [int(i) for i in x.data]}
        if x.grad:
            ij["requires_grad"] = True
        if x.views:
            ij["views"] = x.views
            ij["contiguous"] = v.is_contiguous()
        if x.grad and loss is not None:
            ij["grad"] = None if b.grad is None else f32list(b.grad.numpy())
        c["inputs"].append(ij)
    CASES.append(c)


def unary_cases():
    # (op, generator of an in-domain input for a given shape)
    def any_(*s, **k):
        return randn(*s, **k)

    def pos(*s, **k):
        return uniform(0.1, 3.0, *s, **k)

    def with_zeros(*s, **k):
        x = randn(*s, **k)
        x.data[::3] = 0
        return x

    table = [
        ("Neg", any_), ("Exp", any_), ("Log", pos), ("Sqrt", pos), ("Rsqrt", pos),
        ("Abs", with_zeros), ("Sign", with_zeros), ("Square", any_), ("Tanh", any_),
        ("Sigmoid", any_), ("ReLU", with_zeros), ("GELU", any_), ("GELUTanh", any_),
        ("Sin", any_), ("Cos", any_),
    ]
    for op, gen in table:
        case("contiguous", op, [gen(3, 4)])
        case("permuted", op, [permuted(gen, [2, 3, 4])])
        case("sliced", op, [sliced(gen, [3, 4])])
        case("offset", op, [offset(gen, [3, 4])])
        case("expanded", op, [expanded(gen, [3, 4], 0)])
        case("scalar0d", op, [gen()])
        case("empty", op, [gen(0, 3)])
    # NaN propagates through every unary op, forward and backward
    for op, _ in table:
        case("nan", op, [values([float("nan"), 0.5, 1.5])])
    # saturation and large magnitudes
    big = [-30, -12, -3.5, -1e-3, 0, 1e-3, 3.5, 12, 30]
    for op in ["Tanh", "Sigmoid", "GELU", "GELUTanh", "ReLU", "Abs", "Neg", "Sin", "Cos"]:
        case("large", op, [values(big)])
    case("large", "Exp", [values([-80, -20, -1, 0, 1, 20, 80])])
    case("wide_range", "Log", [values([1e-30, 1e-6, 0.5, 1, 2, 1e6, 3e38])])
    case("wide_range", "Sqrt", [values([1e-30, 1e-6, 0.5, 1, 2, 1e6, 3e38])])
    case("wide_range", "Rsqrt", [values([1e-30, 1e-6, 0.5, 1, 2, 1e6, 3e38])])


def scalar_cases():
    for op, s in [("AddScalar", 2.5), ("SubScalar", 1.25), ("RSubScalar", 3.0), ("MulScalar", -1.5),
                  ("DivScalar", 4.0), ("DivScalar", -0.3)]:
        name = "s=%g" % s
        case(name, op, [randn(3, 4)], s=s)
        case(name + "/permuted", op, [permuted(randn, [3, 4])], s=s)
        case(name + "/scalar0d", op, [randn()], s=s)
        case(name + "/empty", op, [randn(2, 0)], s=s)
    for s in [2.0, 3.0, -1.0, 0.5, -0.5, 1.5, 0.0, 1.0]:
        if s == int(s) and s >= 0:
            case("s=%g" % s, "PowScalar", [randn(3, 4)], s=s)
        else:
            case("s=%g" % s, "PowScalar", [uniform(0.2, 3, 3, 4)], s=s)
    case("s=2/sliced", "PowScalar", [sliced(randn, [3, 4])], s=2.0)
    case("s=3/neg_base", "PowScalar", [uniform(-3, -0.2, 5)], s=3.0)
    case("s=0/at_zero", "PowScalar", [values([0, 1, -2])], s=0.0)
    case("s=1/at_zero", "PowScalar", [values([0, 1, -2])], s=1.0)
    case("nan", "PowScalar", [values([float("nan"), 2])], s=2.0)
    case("nan", "MulScalar", [values([float("nan"), 2])], s=2.0)
    case("s=2/at_zero", "PowScalar", [values([0, 0, 1, -1])], s=2.0)
    case("basic", "Clamp", [randn(4, 5)], lo=-0.5, hi=0.7)
    case("boundaries", "Clamp", [values([-2, -0.5, 0, 0.7, 2, -0.5, 0.7])], lo=-0.5, hi=0.7)
    case("nan", "Clamp", [values([float("nan"), 0.2, 2])], lo=-0.5, hi=0.7)
    case("lo_eq_hi", "Clamp", [values([-1, 0.25, 1])], lo=0.25, hi=0.25)
    case("permuted", "Clamp", [permuted(randn, [3, 4])], lo=-0.3, hi=0.3)
    for op in ["EqScalar", "GtScalar", "LtScalar"]:
        case("basic", op, [values([-1, 0, 0.5, 1, 2, 0.5], grad=False)], s=0.5)
        case("permuted", op, [values([[0.5, 1], [0.5, -2], [3, 0.5]], grad=False, views=[{"permute": [1, 0]}])], s=0.5)


def binary_cases():
    def gen_for(op):
        if op == "Pow":
            return (lambda *s, **k: uniform(0.2, 3.0, *s, **k)), (lambda *s, **k: uniform(-2, 2, *s, **k))
        if op == "Div":
            return randn, (lambda *s, **k: uniform(0.5, 2.0, *s, **k))
        return randn, randn
    for op in ["Add", "Sub", "Mul", "Div", "Pow", "Maximum", "Minimum"]:
        ga, gb = gen_for(op)
        case("same_shape", op, [ga(3, 4), gb(3, 4)])
        case("bcast_right_row", op, [ga(3, 4), gb(4)])
        case("bcast_left_row", op, [ga(4), gb(3, 4)])
        case("bcast_col", op, [ga(3, 1), gb(3, 4)])
        case("bcast_both", op, [ga(3, 1), gb(1, 4)])
        case("bcast_rank", op, [ga(2, 1, 4), gb(3, 1)])
        case("scalar0d_right", op, [ga(3, 4), gb()])
        case("scalar0d_left", op, [ga(), gb(2, 3)])
        case("permuted", op, [permuted(ga, [2, 3, 4]), gb(2, 3, 4)])
        case("permuted_both", op, [permuted(ga, [3, 4]), permuted(gb, [3, 4])])
        case("sliced_bcast", op, [sliced(ga, [3, 4], dim=0), sliced(gb, [4])])
        case("expanded", op, [expanded(ga, [3, 4], 1), gb(3, 4)])
        case("empty", op, [ga(0, 4), gb(4)])
        case("empty_bcast", op, [ga(2, 0, 1), gb(3)])
        case("only_a_grad", op, [ga(3, 4), gb(3, 4, grad=False)])
        case("only_b_grad", op, [ga(3, 4, grad=False), gb(4)])
    # ties share the gradient equally
    a = [1, 2, 3, -1, 0.5, 0.5]
    b = [1, 0, 3, 2, 0.5, 0.25]
    case("ties", "Maximum", [values(a), values(b)])
    case("ties", "Minimum", [values(a), values(b)])
    case("nan", "Maximum", [values([float("nan"), 1, 2]), values([0, float("nan"), 1])])
    case("nan", "Minimum", [values([float("nan"), 1, 2]), values([0, float("nan"), 1])])
    # pow at zero base with exponents >= 0; integer exponents of a negative base
    case("zero_base", "Pow", [values([0, 0, 0, 2]), values([0, 1, 2, 3])])
    case("neg_base_int_exp", "Pow", [values([-2, -1.5, -3]), values([2, 3, 1])])
    case("zero_exp", "Pow", [uniform(0.5, 2, 4), values([0, 0, 0, 0])])
    case("div_by_neg", "Div", [randn(4), uniform(-2, -0.5, 4)])


def compare_cases():
    a = [[0, 1, 2, 3], [1, 1, -1, 5]]
    b = [1, 1, 2, 0]
    for op in ["Eq", "Ne", "Lt", "Le", "Gt", "Ge"]:
        case("float_bcast", op, [values(a, grad=False), values(b, grad=False)])
        case("float_permuted", op, [values(a, grad=False, views=[{"permute": [1, 0]}]),
                                    values([[1], [1], [2], [0]], grad=False)])
        case("int64", op, [ints(a), ints(b)])
        case("empty", op, [values(np.zeros((0, 4)), grad=False), values(b, grad=False)])
        case("nan", op, [values([float("nan"), 1, float("nan")], grad=False), values([1, float("nan"), float("nan")], grad=False)])


def where_cases():
    cond = values([[1, 0, 2.5, 0], [0, -1, 0, 1], [1, 1, 0, 0]], grad=False)
    case("same_shape", "Where", [cond, randn(3, 4), randn(3, 4)])
    case("bcast_all", "Where", [values([[1], [0], [1]], grad=False), randn(4), randn(3, 1)])
    case("bcast_cond", "Where", [values([1, 0, 0, 1], grad=False), randn(3, 4), randn(3, 4)])
    case("scalar_b", "Where", [cond, randn(3, 4), randn()])
    case("permuted", "Where", [cond, permuted(randn, [3, 4]), sliced(randn, [3, 4])])
    case("only_a_grad", "Where", [cond, randn(3, 4), randn(3, 4, grad=False)])
    case("empty", "Where", [values(np.zeros((0, 2)), grad=False), randn(0, 2), randn(2)])
    mask = values([[0, 1, 0, 0], [1, 1, 0, 0], [0, 0, 0, 1]], grad=False)
    case("basic", "MaskedFill", [randn(3, 4), mask], value=-1.5)
    case("neg_inf", "MaskedFill", [randn(3, 4), mask], value=float("-inf"))
    case("bcast_mask", "MaskedFill", [randn(2, 3, 4), values([[1, 0, 0, 1]], grad=False)], value=0.0)
    case("permuted", "MaskedFill", [permuted(randn, [3, 4]), mask], value=7.0)


def reduce_cases():
    for op in ["Sum", "Mean", "Max", "Min", "Var", "LogSumExp"]:
        case("all", op, [randn(3, 4)])
        case("all_keep", op, [randn(3, 4)], keep=True)
        case("all_3d", op, [randn(2, 3, 4)])
        case("dim0", op, [randn(3, 4)], dims=[0])
        case("dim1_keep", op, [randn(3, 4)], dims=[1], keep=True)
        case("dim_neg", op, [randn(2, 3, 4)], dims=[-1])
        case("dim_mid_keep", op, [randn(2, 3, 4)], dims=[1], keep=True)
        case("dims_0_2", op, [randn(2, 3, 4)], dims=[0, 2])
        case("dims_0_2_keep", op, [randn(2, 3, 4)], dims=[2, 0], keep=True)
        case("dims_all_listed", op, [randn(2, 3, 4)], dims=[0, 1, 2])
        case("permuted", op, [permuted(randn, [2, 3, 4])], dims=[1])
        case("permuted_all", op, [permuted(randn, [3, 4])])
        case("sliced", op, [sliced(randn, [3, 4])], dims=[1])
        case("size1_dim", op, [randn(3, 1, 4)], dims=[1]) if op != "Var" else None
        case("1d", op, [randn(5)], dims=[0])
        case("scalar0d", op, [randn(grad=op != "Var")])
    # empty tensors: sums and means are defined over an empty dimension
    case("empty_dim", "Sum", [randn(0, 3)], dims=[0])
    case("empty_all", "Sum", [randn(2, 0)])
    case("empty_other_dim", "Sum", [randn(0, 3)], dims=[1])
    case("empty_dim", "Mean", [randn(0, 3)], dims=[0])
    case("empty_other_dim", "Max", [randn(0, 3)], dims=[1])
    case("empty_dim", "LogSumExp", [randn(2, 0)], dims=[1])
    case("expanded", "Sum", [expanded(randn, [3, 4], 0)], dims=[0])
    case("expanded", "Var", [expanded(randn, [3, 4], 1)], dims=[0])
    # Var over a single element divides by zero: NaN, as in PyTorch
    case("size1_dim", "Var", [randn(3, 1, 4)], dims=[1])
    # ties in Max/Min: amax/amin share the gradient equally
    tie = [[1, 3, 3, 0], [2, 2, 2, -1], [5, -1, 5, 5]]
    case("ties_dim1", "Max", [values(tie)], dims=[1])
    case("ties_all", "Max", [values(tie)])
    case("ties_dim0", "Min", [values(tie)], dims=[0])
    case("ties_all", "Min", [values([[1, -1, 3], [-1, 2, -1]])])
    nan = float("nan")
    for op in ["Sum", "Mean", "Max", "Min", "Var", "LogSumExp"]:
        case("nan", op, [values([[1, nan, 3], [0, 2, -1]])], dims=[1])
    for op in ["ArgMax", "ArgMin"]:
        case("nan", op, [values([[1, nan, 3], [0, 2, -1]], grad=False)], dim=1)
    case("neg_inf_entries", "LogSumExp", [values([[0, float("-inf"), 1], [float("-inf"), 2, 3]])], dims=[1])
    case("large_values", "LogSumExp", [values([[1000, 1001, 999], [-1000, -1002, -999]])], dims=[1])
    case("large_values", "Var", [values([1e4 + 1, 1e4 + 2, 1e4 + 3, 1e4 + 4])])
    for op in ["ArgMax", "ArgMin"]:
        case("dim1", op, [randn(3, 5, grad=False)], dim=1)
        if op == "ArgMax":  # Wick has ArgMaxKeepDim; ArgMin has no keepDim form
            case("dim0_keep", op, [randn(3, 5, grad=False)], dim=0, keep=True)
        else:
            case("dim0", op, [randn(3, 5, grad=False)], dim=0)
        case("dim_neg", op, [randn(2, 3, 4, grad=False)], dim=-2)
        case("all", op, [randn(3, 5, grad=False)])
        case("permuted", op, [permuted(randn, [3, 4], grad=False)], dim=1)
        case("permuted_all", op, [permuted(randn, [3, 4], grad=False)])
        case("sliced", op, [sliced(randn, [3, 4], grad=False)], dim=1)
        case("ties_first", op, [values([[1, 3, 3, 0], [5, -1, 5, -1], [2, 2, 2, 2]], grad=False)], dim=1)
        case("ties_all_first", op, [values([[1, 3, 3, 0], [5, -1, 5, -1]], grad=False)])
        case("scalar0d", op, [randn(grad=False)])


def matmul_cases():
    c = lambda n, a, b: case(n, "MatMul", [a, b])
    c("dot_1d_1d", randn(5), randn(5))
    c("vec_mat_1d_2d", randn(4), randn(4, 3))
    c("mat_vec_2d_1d", randn(3, 4), randn(4))
    c("mat_2d", randn(3, 4), randn(4, 5))
    c("mat_2d_square", randn(6, 6), randn(6, 6))
    c("mat_2d_larger", randn(17, 33), randn(33, 9))
    c("k_crosses_block", randn(3, 260), randn(260, 17))
    c("batched_same", randn(2, 3, 4), randn(2, 4, 5))
    c("batched_3d_2d", randn(2, 3, 4), randn(4, 5))
    c("batched_2d_3d", randn(3, 4), randn(2, 4, 5))
    c("batched_1d_3d", randn(4), randn(2, 4, 5))
    c("batched_3d_1d", randn(2, 3, 4), randn(4))
    c("bcast_batch_a_to_b", randn(2, 1, 3, 4), randn(5, 4, 2))
    c("bcast_batch_b_to_a", randn(5, 3, 4), randn(2, 1, 4, 2))
    c("bcast_batch_both", randn(2, 1, 3, 4), randn(1, 3, 4, 2))
    c("transposed_a", permuted(randn, [3, 4]), randn(4, 5))
    c("transposed_b", randn(3, 4), permuted(randn, [4, 5]))
    c("transposed_both", permuted(randn, [3, 4]), permuted(randn, [4, 5]))
    case("transposed_batched", "MatMul",
         [randn(2, 4, 3, views=[{"transpose": [1, 2]}]), randn(2, 5, 4, views=[{"transpose": [-1, -2]}])])
    case("permuted_4d", "MatMul",
         [randn(2, 3, 2, 4, views=[{"permute": [0, 2, 1, 3]}]), randn(2, 2, 4, 3, views=[{"permute": [1, 0, 2, 3]}])])
    c("sliced", sliced(randn, [3, 4], dim=1), sliced(randn, [4, 5], dim=0))
    c("expanded_batch", expanded(randn, [3, 2, 4], 0), randn(3, 4, 2))
    c("expanded_cols", randn(2, 3), expanded(randn, [3, 4], 1))
    c("size1_dims", randn(1, 4), randn(4, 1))
    c("outer_k1", randn(3, 1), randn(1, 4))
    c("empty_k", randn(3, 0), randn(0, 4))
    c("empty_m", randn(0, 4), randn(4, 3))
    c("empty_batch", randn(0, 2, 3), randn(3, 4))
    case("only_a_grad", "MatMul", [randn(2, 3, 4), randn(4, 5, grad=False)])
    case("only_b_grad", "MatMul", [randn(2, 3, 4, grad=False), randn(2, 4, 5)])
    case("issue2", "IssueViewPermute", [values(np.arange(4, dtype=np.float32))], upstream="ones")
    case("issue2_random_upstream", "IssueViewPermute", [values(np.arange(4, dtype=np.float32))])


def nn_cases():
    for op in ["Softmax", "LogSoftmax"]:
        case("dim_last", op, [randn(3, 5)], dim=-1)
        case("dim0", op, [randn(3, 5)], dim=0)
        case("3d_mid", op, [randn(2, 3, 4)], dim=1)
        case("3d_first", op, [randn(2, 3, 4)], dim=0)
        case("permuted", op, [permuted(randn, [3, 4, 2])], dim=-1)
        case("sliced", op, [sliced(randn, [3, 4])], dim=1)
        case("offset", op, [offset(randn, [3, 4])], dim=1)
        case("offset_dim0", op, [offset(randn, [3, 4])], dim=0)
        case("1d", op, [randn(6)], dim=0)
        case("size1", op, [randn(3, 1)], dim=1)
        case("scalar0d", op, [randn()], dim=0)
        case("large", op, [values([[1000, 1001, 999], [-1000, -1002, -999]])], dim=1)
        case("neg_inf", op, [values([[0, float("-inf"), 1], [float("-inf"), 2, 3]])], dim=1) if op == "Softmax" else None
        case("empty_rows", op, [randn(0, 4)], dim=1)
        case("all_neg_inf_row", op, [values([[float("-inf")] * 3, [0, 1, 2]])], dim=1)
    ln = lambda n, ins, **k: case(n, "LayerNorm", ins, eps=k.pop("eps", 1e-5), **k)
    ln("weight_bias", [randn(2, 3, 5), randn(5), randn(5)], weight=True, bias=True)
    ln("no_affine", [randn(4, 6)])
    ln("weight_only", [randn(4, 6), randn(6)], weight=True)
    ln("bias_only", [randn(4, 6), randn(6)], bias=True)
    ln("permuted", [permuted(randn, [3, 4, 6]), randn(6), randn(6)], weight=True, bias=True)
    ln("sliced_params", [randn(3, 4), sliced(randn, [4]), sliced(randn, [4])], weight=True, bias=True)
    ln("eps_large", [randn(3, 4), randn(4), randn(4)], weight=True, bias=True, eps=0.1)
    ln("1d", [randn(7), randn(7), randn(7)], weight=True, bias=True)
    ln("offset_scale", [values(np.random.RandomState(5).randn(3, 8) * 0.01 + 100), randn(8), randn(8)], weight=True, bias=True, ref64=True)
    ln("offset_input", [offset(randn, [3, 5]), randn(5), randn(5)], weight=True, bias=True)
    ln("selected_input", [randn(2, 3, 4, views=[{"select": [0, 1]}]), randn(4), randn(4)], weight=True, bias=True)
    ln("params_no_grad", [randn(2, 5), randn(5, grad=False), randn(5, grad=False)], weight=True, bias=True)

    case("eval", "Dropout", [randn(3, 4)], p=0.5, training=False)
    case("p0_training", "Dropout", [randn(3, 4)], p=0.0, training=True)
    case("p1_training", "Dropout", [randn(3, 4)], p=1.0, training=True)

    case("dim0", "IndexSelect", [randn(5, 3), ints([4, 0, 2])], dim=0)
    case("dim1_repeats", "IndexSelect", [randn(3, 5), ints([1, 1, 4, 0, 1])], dim=1)
    case("dim_neg_3d", "IndexSelect", [randn(2, 3, 4), ints([3, 0])], dim=-1)
    case("permuted", "IndexSelect", [permuted(randn, [4, 3]), ints([2, 2, 0])], dim=0)
    case("offset", "IndexSelect", [offset(randn, [4, 3]), ints([[9, 9], [2, 0], [1, 3]], views=[{"select": [0, 1]}])], dim=0)
    case("empty_index", "IndexSelect", [randn(4, 3), ints(np.zeros(0, dtype=np.int64))], dim=0)
    case("idx_1d", "Embedding", [randn(6, 4), ints([5, 0, 3, 3])])
    case("idx_2d_repeats", "Embedding", [randn(6, 4), ints([[1, 2, 1], [0, 1, 5]])])
    case("idx_0d", "Embedding", [randn(6, 4), ints(3, shape=[])])
    case("weight_permuted", "Embedding", [permuted(randn, [5, 3]), ints([[4, 4], [0, 2]])])
    case("offset", "Embedding", [offset(randn, [5, 3]), ints([[9, 9, 9], [4, 1, 4], [0, 2, 2]], views=[{"slice": [0, 1, 3]}])])

    case("basic", "CrossEntropy", [randn(4, 5), ints([1, 0, 4, 2])])
    case("3d_logits", "CrossEntropy", [randn(2, 3, 5), ints([[1, 0, 4], [2, 2, 3]])])
    case("permuted", "CrossEntropy", [permuted(randn, [4, 5]), ints([3, 3, 0, 1])])
    case("offset", "CrossEntropy", [offset(randn, [3, 4]), ints([9, 0, 3, 1], views=[{"slice": [0, 1, 4]}])])
    case("large_logits", "CrossEntropy", [values([[1000, 0, -1000], [50, 60, 70]]), ints([1, 2])])
    case("ignore_minus1", "CrossEntropy", [randn(5, 4), ints([1, -1, 3, -1, 0])], ignore=-1)
    case("ignore_minus100", "CrossEntropy", [randn(4, 3), ints([-100, 2, 0, 1])], ignore=-100)
    case("ignore_none_hit", "CrossEntropy", [randn(3, 4), ints([0, 1, 2])], ignore=-1)
    case("ignore_class_index", "CrossEntropy", [randn(4, 3), ints([2, 0, 2, 1])], ignore=2)
    case("ignore_all", "CrossEntropy", [randn(2, 3), ints([-1, -1])], ignore=-1)
    case("single_class", "CrossEntropy", [randn(3, 1), ints([0, 0, 0])])

    for op, fn in [("Tril", "tril"), ("Triu", "triu")]:
        for k in [0, 1, -1, 5, -5]:
            case("k=%d" % k, op, [randn(4, 5)], k=k)
        case("batched", op, [randn(2, 3, 3)], k=0)
        case("tall", op, [randn(5, 3)], k=-1)
        case("permuted", op, [permuted(randn, [2, 4, 4])], k=1)
        case("empty", op, [randn(0, 3)], k=0)

    case("dim0", "Cat", [randn(2, 3), randn(1, 3), randn(4, 3)], dim=0)
    case("dim1", "Cat", [randn(2, 3), randn(2, 1), randn(2, 2)], dim=1)
    case("dim_neg_3d", "Cat", [randn(2, 3, 1), randn(2, 3, 2)], dim=-1)
    case("non_contiguous", "Cat", [permuted(randn, [3, 4]), sliced(randn, [2, 4], dim=1)], dim=0)
    case("with_empty", "Cat", [randn(2, 3), randn(0, 3), randn(1, 3)], dim=0)
    case("single", "Cat", [randn(2, 3)], dim=1)
    case("partial_grad", "Cat", [randn(2, 3), randn(2, 3, grad=False)], dim=0)
    case("int64", "Cat", [ints([[1, 2], [3, 4]]), ints([[5, 6]])], dim=0)
    case("dim0", "Stack", [randn(2, 3), randn(2, 3), randn(2, 3)], dim=0)
    case("dim1", "Stack", [randn(2, 3), randn(2, 3)], dim=1)
    case("dim_last", "Stack", [randn(2, 3), permuted(randn, [2, 3])], dim=-1)
    case("1d", "Stack", [randn(4), randn(4)], dim=0)
    case("0d", "Stack", [randn(), randn(), randn()], dim=0)
    case("dim1_rem", "Split", [randn(3, 7)], size=3, dim=1)
    case("dim0_even", "Split", [randn(4, 2)], size=2, dim=0)
    case("big_size", "Split", [randn(3, 2)], size=10, dim=0)
    case("permuted", "Split", [permuted(randn, [5, 3])], size=2, dim=0)
    case("empty_dim", "Split", [randn(0, 3)], size=2, dim=0)
    case("n3_of_7", "Chunk", [randn(2, 7)], n=3, dim=1)
    case("n4_of_5", "Chunk", [randn(5, 2)], n=4, dim=0)
    case("n2_of_4", "Chunk", [randn(4, 3)], n=2, dim=-2)
    case("n_more_than_size", "Chunk", [randn(2, 3)], n=5, dim=0)

    for causal in [False, True]:
        tag = "causal" if causal else "full"
        case(tag, "ScaledDotProductAttention", [randn(2, 5, 4), randn(2, 5, 4), randn(2, 5, 3)], causal=causal)
        case(tag + "_4d", "ScaledDotProductAttention",
             [randn(2, 2, 4, 8), randn(2, 2, 4, 8), randn(2, 2, 4, 8)], causal=causal)
        case(tag + "_transposed_heads", "ScaledDotProductAttention",
             [randn(2, 4, 2, 3, views=[{"transpose": [1, 2]}]),
              randn(2, 4, 2, 3, views=[{"transpose": [1, 2]}]),
              randn(2, 4, 2, 3, views=[{"transpose": [1, 2]}])], causal=causal)
        case(tag + "_2d", "ScaledDotProductAttention", [randn(3, 2), randn(3, 2), randn(3, 4)], causal=causal)
    case("cross_attention", "ScaledDotProductAttention", [randn(2, 3, 4), randn(2, 6, 4), randn(2, 6, 5)], causal=False)
    case("bcast_kv", "ScaledDotProductAttention", [randn(2, 3, 4), randn(1, 3, 4), randn(1, 3, 2)], causal=True)


def view_cases():
    case("infer", "Reshape", [randn(2, 3, 4)], shape=[-1, 4])
    case("infer_first", "Reshape", [randn(2, 3, 4)], shape=[6, -1])
    case("to_0d", "Reshape", [randn(1, 1)], shape=[])
    case("from_0d", "Reshape", [randn()], shape=[1, 1, 1])
    case("copy_path", "Reshape", [permuted(randn, [3, 4])], shape=[12])
    case("copy_path_3d", "Reshape", [permuted(randn, [2, 3, 4])], shape=[-1, 2])
    case("view_path_sliced", "Reshape", [sliced(randn, [3, 4], dim=0)], shape=[3, 2, 2])
    case("empty", "Reshape", [randn(0, 3)], shape=[3, -1])
    case("basic", "View", [randn(2, 6)], shape=[3, 4])
    case("infer", "View", [randn(2, 3, 4)], shape=[2, -1])
    case("split_dim_of_transposed", "View", [randn(4, 6, views=[{"transpose": [0, 1]}])], shape=[2, 3, 4])
    case("sliced_rows", "View", [sliced(randn, [2, 3, 4], dim=0)], shape=[2, 12])
    case("3d", "Permute", [randn(2, 3, 4)], dims=[2, 0, 1])
    case("neg_dims", "Permute", [randn(2, 3, 4)], dims=[-1, -3, -2])
    case("of_permuted", "Permute", [permuted(randn, [2, 3, 4])], dims=[1, 2, 0])
    case("2d", "Transpose", [randn(3, 4)], d0=0, d1=1)
    case("3d_neg", "Transpose", [randn(2, 3, 4)], d0=-1, d1=-3)
    case("same_dim", "Transpose", [randn(2, 3)], d0=1, d1=1)
    case("2d", "T", [randn(3, 4)])
    case("3d", "T", [randn(2, 3, 4)])
    case("1d", "T", [randn(5)])
    case("basic", "Slice", [randn(5, 4)], dim=0, start=1, end=4)
    case("neg_bounds", "Slice", [randn(3, 6)], dim=1, start=-4, end=-1)
    case("clamped", "Slice", [randn(3, 6)], dim=-1, start=2, end=100)
    case("empty_range", "Slice", [randn(3, 6)], dim=1, start=4, end=2)
    case("of_permuted", "Slice", [permuted(randn, [4, 5])], dim=1, start=1, end=3)
    case("basic", "Narrow", [randn(5, 4)], dim=1, start=1, length=2)
    case("neg_start", "Narrow", [randn(5, 4)], dim=0, start=-3, length=3)
    case("zero_length", "Narrow", [randn(5, 4)], dim=0, start=2, length=0)
    case("basic", "Select", [randn(3, 4)], dim=0, index=1)
    case("neg_index", "Select", [randn(2, 3, 4)], dim=-1, index=-1)
    case("mid", "Select", [randn(2, 3, 4)], dim=1, index=2)
    case("of_permuted", "Select", [permuted(randn, [3, 4])], dim=1, index=0)
    case("1d_to_0d", "Select", [randn(4)], dim=0, index=3)
    case("basic", "Expand", [randn(3, 1)], shape=[3, 4])
    case("new_dims", "Expand", [randn(1, 4)], shape=[2, 3, 4])
    case("minus1", "Expand", [randn(3, 1)], shape=[2, -1, 5])
    case("0d", "Expand", [randn()], shape=[2, 3])
    case("to_empty", "Expand", [randn(1, 3)], shape=[0, 3])
    case("of_permuted", "Expand", [permuted(randn, [1, 3])], shape=[4, 3])
    case("all", "Squeeze", [randn(1, 3, 1, 4)])
    case("one_dim", "Squeeze", [randn(1, 3, 1, 4)], dims=[2])
    case("neg_dim", "Squeeze", [randn(1, 3, 1)], dims=[-1])
    case("non_one_dim_kept", "Squeeze", [randn(2, 3)], dims=[0])
    case("several_dims", "Squeeze", [randn(1, 3, 1, 1)], dims=[0, 3])
    case("of_permuted", "Squeeze", [permuted(randn, [3, 1, 2])])
    case("front", "Unsqueeze", [randn(3, 4)], dim=0)
    case("end", "Unsqueeze", [randn(3, 4)], dim=2)
    case("neg", "Unsqueeze", [randn(3, 4)], dim=-1)
    case("of_permuted", "Unsqueeze", [permuted(randn, [3, 4])], dim=1)
    case("0d", "Unsqueeze", [randn()], dim=0)
    case("all", "Flatten", [randn(2, 3, 4)])
    case("range", "Flatten", [randn(2, 3, 4, 2)], range=[1, 2])
    case("start_only", "Flatten", [randn(2, 3, 4)], range=[1])
    case("neg_range", "Flatten", [randn(2, 3, 4)], range=[-2, -1])
    case("of_permuted", "Flatten", [permuted(randn, [2, 3, 4])])
    case("0d", "Flatten", [randn()])
    case("permuted", "Contiguous", [permuted(randn, [3, 4])])
    case("already", "Contiguous", [randn(3, 4)])
    case("expanded", "Contiguous", [expanded(randn, [3, 4], 0)])
    case("sliced", "Clone", [sliced(randn, [3, 4])])
    case("basic", "Clone", [randn(2, 2)])
    case("fan_out", "FanOut", [randn(3, 3)])
    case("split_cat", "OffsetPieces", [randn(5, 4)])
    case("gpt_style", "AttentionBlock", [randn(2, 4, 8), randn(8, 24, scale=0.3), randn(8), randn(8)], heads=2)


def creation_cases():
    for start, end, step in [(0, 5, 1), (0, 1, 0.1), (0, 0.3, 0.1), (-1, 1, 0.25), (5, 0, -1.5),
                             (2, 2, 1), (0.5, 7.25, 0.75), (1, 0, 0.5), (1, 2.2, 0.4), (0, 0.9, 0.3),
                             (-0.3, 0.3, 0.1), (10, 9.7, -0.1)]:
        if (end - start) * step < 0:
            continue  # torch rejects it, and so does Wick (an error test covers it)
        case("%g_%g_%g" % (start, end, step), "Arange", [], start=float(start), end=float(end), step=float(step))
    for n in [0, 1, 3]:
        case("n=%d" % n, "Eye", [], n=n)


NAN = float("nan")


def sort_gather_scan_cases():
    for start, end, steps in [(0, 1, 5), (-1, 1, 7), (0, 1, 10), (0.1, 0.7, 13), (2, 3, 2), (3, 3, 1),
                              (1, 5, 0), (5, -2, 15), (-3.3, 7.7, 100), (0, 1, 1000), (1e-3, 1e3, 50)]:
        case("%g_%g_%d" % (start, end, steps), "Linspace", [], start=float(start), end=float(end), steps=steps)

    ties = [[1, 3, 3, 2, 3, 1, NAN, 2, NAN, 0], [0.0, -0.0, 0.0, 5, -1, 5, -1, 2, 2, 2]]
    for desc in (False, True):
        t = "desc" if desc else "asc"
        case(t + "_last", "Sort", [randn(4, 5)], dim=-1, descending=desc)
        case(t + "_dim0", "Sort", [randn(5, 3)], dim=0, descending=desc)
        case(t + "_permuted", "Sort", [permuted(randn, [3, 4])], dim=1, descending=desc)
        case(t + "_sliced_3d_neg_dim", "Sort", [sliced(randn, [2, 5, 3], dim=1)], dim=-2, descending=desc)
        case(t + "_ties_nan", "Sort", [values(ties)], dim=1, descending=desc)
        case(t + "_ties_nan_dim0", "Sort", [values(ties, views=[{"transpose": [0, 1]}])], dim=0, descending=desc)
        case(t + "_expanded", "Sort", [expanded(randn, [3, 4], 0)], dim=0, descending=desc)
    case("empty", "Sort", [randn(0, 3)], dim=-1, descending=False)
    case("0d", "Sort", [randn()], dim=0, descending=True)

    for largest in (True, False):
        t = "largest" if largest else "smallest"
        case(t + "_last", "TopK", [randn(4, 6)], k=3, dim=-1, largest=largest)
        case(t + "_dim0_permuted", "TopK", [permuted(randn, [5, 3])], k=2, dim=0, largest=largest)
        case(t + "_3d_neg_dim", "TopK", [sliced(randn, [2, 6, 3], dim=1)], k=4, dim=-2, largest=largest)
        case(t + "_k0", "TopK", [randn(3, 4)], k=0, dim=1, largest=largest)
        case(t + "_all", "TopK", [randn(3, 4)], k=4, dim=1, largest=largest)
        # forward only: the gradient goes to whichever tied element the
        # indices name
        case(t + "_ties_nan", "TopKTies", [values(ties, grad=False)], k=5, dim=1, largest=largest)
        case(t + "_ties_nan_full", "TopKTies", [values(ties, grad=False, views=[{"transpose": [0, 1]}])], k=10, dim=0,
             largest=largest)
    case("0d", "TopK", [randn()], k=1, dim=0, largest=True)

    case("dim1", "Gather", [randn(3, 4), ints([[0, 0, 3], [1, 2, 0], [3, 3, 3]])], dim=1)
    case("dim0_smaller_index", "Gather", [randn(4, 3), ints([[3, 0], [1, 1], [0, 2]])], dim=0)
    case("neg_dim_permuted", "Gather", [permuted(randn, [3, 5]), ints([[4, 0, 4], [2, 2, 1]])], dim=-1)
    case("3d_sliced", "Gather", [sliced(randn, [2, 3, 4], dim=2), ints(np.arange(18).reshape(2, 3, 3) % 4)], dim=2)
    case("transposed_index", "Gather", [randn(3, 4), ints([[0, 2, 1], [3, 0, 0], [1, 1, 2], [2, 3, 3]], views=[{"transpose": [0, 1]}])], dim=1)
    case("expanded_input", "Gather", [expanded(randn, [3, 4], 0), ints([[0, 1], [2, 0], [1, 2]])], dim=0)
    case("0d", "Gather", [randn(), ints(0, shape=[])], dim=0)
    case("empty_index", "Gather", [randn(2, 3), ints(np.zeros((2, 0)))], dim=1)

    dup = ints([[1, 1, 1, 1], [1, 0, 1, 1], [1, 1, 1, 0]])
    for op in ("Scatter", "ScatterAdd"):
        case("dim0", op, [randn(3, 4), ints([[0, 1, 2, 0], [2, 0, 0, 1]]), randn(2, 4)], dim=0)
        case("dim1_neg", op, [randn(3, 5), ints([[4, 0], [1, 3], [2, 2]]), randn(3, 2)], dim=-1)
        case("duplicates", op, [randn(2, 4), dup, randn(3, 4)], dim=0)
        case("src_larger", op, [randn(3, 4), ints([[0, 1], [2, 0]]), randn(3, 5, grad=False)], dim=0)
        case("permuted_self_transposed_src", op,
             [permuted(randn, [3, 4]), ints([[0, 1, 2, 0], [2, 2, 0, 1]]), randn(4, 2, views=[{"transpose": [0, 1]}])], dim=0)
        case("3d_sliced", op, [sliced(randn, [2, 3, 4], dim=1), ints(np.arange(24).reshape(2, 3, 4) % 3), randn(2, 3, 4)], dim=1)
        case("0d", op, [randn(), ints(0, shape=[]), randn()], dim=0)
        case("empty_index", op, [randn(2, 3), ints(np.zeros((2, 0))), randn(2, 0)], dim=1)

    def with_zeros(*shape, **k):
        x = RNG.uniform(0.5, 1.5, size=shape) * RNG.choice([-1, 1], size=shape)
        x[RNG.uniform(size=shape) < 0.2] = 0
        return In(shape, x, **k)

    zero_rows = values([[1.5, 0.5, -2, 0.25, 3],   # no zero
                        [0, 2, 0.5, -1, 1.5],      # zero first
                        [1.5, 2, 0, -1, 0.5],      # one zero inside
                        [2, 0, 0.5, 0, 1.5],       # two zeros
                        [0.5, 2, -1, 1.5, 0],      # zero last
                        [0, 0, 1, 2, 3]])          # two zeros first
    for op in ("Cumsum", "Cumprod"):
        gen = randn if op == "Cumsum" else (lambda *s, **k: uniform(0.5, 1.5, *s, **k))
        case("dim1", op, [gen(3, 4)], dim=1)
        case("dim0", op, [gen(4, 3)], dim=0)
        case("neg_dim_3d", op, [gen(2, 3, 4)], dim=-2)
        case("permuted", op, [permuted(gen, [3, 5])], dim=1)
        case("sliced", op, [sliced(gen, [4, 3], dim=0)], dim=0)
        case("expanded", op, [expanded(gen, [3, 4], 0)], dim=0)
        case("0d", op, [gen()], dim=0)
        case("empty", op, [gen(0, 3)], dim=1)
        case("long_row", op, [gen(2, 300)], dim=1)
        case("zeros", op, [zero_rows], dim=1)
        case("zeros_dim0", op, [values(np.asarray(zero_rows.data).reshape(6, 5), views=[{"transpose": [0, 1]}])], dim=0)
        case("random_zeros", op, [with_zeros(4, 6)], dim=-1)


def write(path, cases):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    doc = {
        "generator": "scripts/gen_golden.py",
        "torch": torch.__version__,
        "cases": cases,
    }
    with open(path, "w") as f:
        json.dump(doc, f, separators=(",", ":"), allow_nan=False)
        f.write("\n")
    print("wrote %d cases to %s (%d bytes)" % (len(cases), os.path.relpath(path), os.path.getsize(path)), file=sys.stderr)


def main():
    global RNG
    creation_cases()
    unary_cases()
    scalar_cases()
    binary_cases()
    compare_cases()
    where_cases()
    reduce_cases()
    matmul_cases()
    nn_cases()
    view_cases()
    write(OUT, CASES)
    # the later ops: their own generator and file
    RNG = np.random.RandomState(26)
    CASES.clear()
    sort_gather_scan_cases()
    write(OUT_SORT_GATHER_SCAN, CASES)


if __name__ == "__main__":
    main()
