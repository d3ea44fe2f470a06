#!/usr/bin/python3
"""Generate golden values for Wick's nn and optim packages from PyTorch.

Run with the system Python, which has PyTorch 1.13 (Debian's python3-torch):

    /usr/bin/python3 scripts/gen_golden_nn.py

It writes, under testdata/nn/ (all safetensors files, read by the Go tests
with nn.ReadStateDict):

  modules.safetensors   Linear, Embedding, LayerNorm, CausalSelfAttention and
                        Block cases. For case C: C.param.<name> (weights),
                        C.x (input), C.g (upstream gradient: the loss is
                        sum(y * g)), C.y (output), C.grad.<name> and C.grad_x.
  gpt_bias.safetensors, gpt_nobias.safetensors
                        the weights of a small nanoGPT model (vocab 65, block
                        16, 2 layers, 2 heads, 32 wide), as model.state_dict()
                        writes them: gpt_bias with the tied lm_head.weight and
                        the causal-mask buffers transformer.h.N.attn.bias,
                        gpt_nobias without either.
  gpt_bias_golden.safetensors, gpt_nobias_golden.safetensors
                        idx, targets (some -1), logits, loss, grad.<name> for
                        every parameter, and a greedy generation (top_k=1):
                        gen.prompt, gen.out; metadata: the order of
                        named_parameters() and the parameter count.
  optim.safetensors     optimizer trajectories: for case C, C.init.<i> (the
                        parameters), C.grad.<k>.<i> (the gradient fed at step
                        k), C.after.<k>.<i> (parameters after step k); and
                        clip.grad.<i>, clip.clipped.<i>, clip.norm. The
                        metadata holds the case configurations ("cases", JSON)
                        and nanoGPT's get_lr for a few schedules ("cosine",
                        JSON).
  sequential.safetensors, container.safetensors
                        the state_dict of a torch.nn.Sequential (Linear and
                        activation modules: names "0.weight", "2.bias", ...)
                        and of a module with a Linear, an nn.ModuleList and
                        a Sequential ("embed.weight", "layers.1.bias",
                        "head.0.weight"), loadable by name with nn.LoadFile.
  sequential_golden.safetensors, container_golden.safetensors
                        x, g (upstream gradient of sum(y * g)), y and
                        grad.<name>; metadata: named_parameters() order.
  sequential_wick_golden.safetensors
                        PyTorch's side of the other direction: it loads
                        testdata/nn/sequential_wick.safetensors, written by
                        Wick (go test ./nn/ -run TestWickFileLoadsInPyTorch
                        -update-wick-file), into the same torch.nn.Sequential
                        with load_state_dict(strict=True) and records x and
                        y = model(x).
  losses.safetensors    mse, l1, bce_logits and nll losses with reductions
                        mean, sum and none: for case C.R, C.x, C.target,
                        C.R.g (upstream gradient), C.R.y, C.R.grad_x and
                        (float targets) C.R.grad_target.
  optim_defaults.safetensors
                        the defaults of torch.optim.AdamW and Adam
                        (metadata "defaults", JSON), and five steps of
                        AdamW with its defaults and with betas (0, 0.999),
                        weight_decay 0: C.init.<i>, C.grad.<k>.<i>,
                        C.after.<k>.<i>.

Each file has its own seed, so adding one leaves the others byte for byte
the same.

The GPT model is nanoGPT's model.py (GPT, Block, CausalSelfAttention, MLP,
LayerNorm) from scripts/nanogpt.py, always on nanoGPT's non-flash path
(flash=False: explicit attention with the causal-mask buffer attn.bias), which
is the only path torch 1.13 has.
"""

import json
import math
import os
import struct
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nanogpt import GPT, Block, CausalSelfAttention, GPTConfig, LayerNorm  # noqa: E402

torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testdata", "nn")


# --------------------------------------------------------------------------
# safetensors, by hand (the safetensors package is not installed)


def save_safetensors(path, tensors, metadata=None):
    header = {}
    if metadata:
        header["__metadata__"] = metadata
    blobs = []
    off = 0
    for name in sorted(tensors):
        t = tensors[name].detach().contiguous().cpu()
        if t.dtype == torch.float32:
            dt = "F32"
        elif t.dtype == torch.int64:
            dt = "I64"
        else:
            raise ValueError(f"{name}: unsupported dtype {t.dtype}")
        b = t.numpy().astype(t.numpy().dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": dt, "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        off += len(b)
        blobs.append(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


# --------------------------------------------------------------------------
# module cases


def module_case(out, name, module, x):
    """Records weights, input, output and gradients of sum(module(x) * g)."""
    for pn, p in module.named_parameters():
        out[f"{name}.param.{pn}"] = p.detach().clone()
    if x.dtype == torch.float32:
        x = x.clone().requires_grad_(True)
    y = module(x)
    g = torch.randn(y.shape)
    (y * g).sum().backward()
    out[f"{name}.x"] = x.detach()
    out[f"{name}.g"] = g
    out[f"{name}.y"] = y.detach()
    for pn, p in module.named_parameters():
        out[f"{name}.grad.{pn}"] = p.grad.detach().clone()
    if x.dtype == torch.float32:
        out[f"{name}.grad_x"] = x.grad.detach()


def gen_modules():
    torch.manual_seed(1)
    out = {}
    module_case(out, "linear", nn.Linear(5, 7), torch.randn(2, 3, 5))
    module_case(out, "linear_nobias", nn.Linear(5, 7, bias=False), torch.randn(4, 5))
    module_case(out, "embedding", nn.Embedding(10, 4), torch.tensor([[1, 3, 3], [9, 0, 1]]))
    ln = LayerNorm(6, bias=True)
    with torch.no_grad():  # non-trivial affine parameters
        ln.weight.add_(0.1 * torch.randn(6))
        ln.bias.add_(0.1 * torch.randn(6))
    module_case(out, "layernorm", ln, torch.randn(3, 6) * 2 + 1)
    ln = LayerNorm(6, bias=False)
    with torch.no_grad():
        ln.weight.add_(0.1 * torch.randn(6))
    module_case(out, "layernorm_nobias", ln, torch.randn(2, 2, 6))
    cfg = GPTConfig(vocab_size=65, block_size=16, n_layer=2, n_head=2, n_embd=32, dropout=0.0, bias=True, flash=False)
    module_case(out, "attention", CausalSelfAttention(cfg), torch.randn(2, 8, 32))
    cfg = GPTConfig(vocab_size=65, block_size=16, n_layer=2, n_head=4, n_embd=32, dropout=0.0, bias=False, flash=False)
    module_case(out, "block", Block(cfg), torch.randn(2, 8, 32))
    # buffers are not parameters: drop the masks
    save_safetensors(os.path.join(OUT, "modules.safetensors"), out)


def gen_gpt(bias):
    torch.manual_seed(1337 if bias else 42)
    cfg = GPTConfig(vocab_size=65, block_size=16, n_layer=2, n_head=2, n_embd=32, dropout=0.0, bias=bias, flash=False)
    model = GPT(cfg)
    with torch.no_grad():  # make the zero-initialised parts non-trivial
        for pn, p in model.named_parameters():
            if pn.endswith(".bias") or ".ln_" in pn:
                p.add_(0.05 * torch.randn(p.shape))
    sd = model.state_dict()
    tag = "bias" if bias else "nobias"
    if not bias:
        sd = {k: v for k, v in sd.items() if k != "lm_head.weight" and not k.endswith(".attn.bias")}
    else:
        assert "lm_head.weight" in sd and "transformer.h.0.attn.bias" in sd
    save_safetensors(os.path.join(OUT, f"gpt_{tag}.safetensors"), dict(sd))

    idx = torch.randint(0, 65, (2, 16))
    targets = torch.randint(0, 65, (2, 16))
    targets[0, 3] = -1
    targets[1, 10:] = -1
    logits, loss = model(idx, targets)
    loss.backward()
    out = {"idx": idx, "targets": targets, "logits": logits.detach(), "loss": loss.detach()}
    for pn, p in model.named_parameters():
        out[f"grad.{pn}"] = p.grad.detach().clone()
    prompt = torch.randint(0, 65, (2, 4))
    out["gen.prompt"] = prompt
    out["gen.out"] = model.generate(prompt, 20, temperature=0.8, top_k=1)
    meta = {"named_parameters": json.dumps([pn for pn, _ in model.named_parameters()]),
            "num_params": str(sum(p.numel() for p in model.parameters()))}
    save_safetensors(os.path.join(OUT, f"gpt_{tag}_golden.safetensors"), out, meta)


# --------------------------------------------------------------------------
# optimizers


OPT_CASES = [
    {"name": "sgd", "kind": "sgd", "lr": 0.1, "momentum": 0.0, "nesterov": False, "weight_decay": 0.0},
    {"name": "sgd_momentum", "kind": "sgd", "lr": 0.1, "momentum": 0.9, "nesterov": False, "weight_decay": 0.0},
    {"name": "sgd_nesterov_wd", "kind": "sgd", "lr": 0.05, "momentum": 0.8, "nesterov": True, "weight_decay": 0.01},
    {"name": "adam", "kind": "adam", "lr": 0.01, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weight_decay": 0.0},
    {"name": "adam_wd", "kind": "adam", "lr": 0.003, "beta1": 0.8, "beta2": 0.99, "eps": 1e-6, "weight_decay": 0.1},
    {"name": "adamw", "kind": "adamw", "lr": 0.01, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weight_decay": 0.01},
    # nanoGPT's groups: decay only tensors with two or more dims
    {"name": "adamw_groups", "kind": "adamw", "lr": 0.001, "beta1": 0.9, "beta2": 0.99, "eps": 1e-8, "weight_decay": 0.1, "groups": True},
]
OPT_SHAPES = [[3, 4], [4], [2, 3, 2]]
OPT_STEPS = 5


def gen_optim():
    torch.manual_seed(7)
    out = {}
    for c in OPT_CASES:
        name = c["name"]
        params = [torch.randn(s).requires_grad_(True) for s in OPT_SHAPES]
        for i, p in enumerate(params):
            out[f"{name}.init.{i}"] = p.detach().clone()
        if c.get("groups"):
            groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": c["weight_decay"]},
                      {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
        else:
            groups = [{"params": params, "weight_decay": c["weight_decay"]}]
        if c["kind"] == "sgd":
            opt = torch.optim.SGD(groups, lr=c["lr"], momentum=c["momentum"], nesterov=c["nesterov"])
        elif c["kind"] == "adam":
            opt = torch.optim.Adam(groups, lr=c["lr"], betas=(c["beta1"], c["beta2"]), eps=c["eps"])
        else:
            opt = torch.optim.AdamW(groups, lr=c["lr"], betas=(c["beta1"], c["beta2"]), eps=c["eps"])
        for k in range(OPT_STEPS):
            if k == 3:  # a learning-rate change mid-way, as a schedule does
                for g in opt.param_groups:
                    g["lr"] = c["lr"] * 0.5
            for i, p in enumerate(params):
                g = torch.randn(p.shape)
                out[f"{name}.grad.{k}.{i}"] = g
                p.grad = g.clone()
            opt.step()
            for i, p in enumerate(params):
                out[f"{name}.after.{k}.{i}"] = p.detach().clone()

    grads = [torch.randn(s) * 3 for s in OPT_SHAPES]
    params = [torch.zeros(s, requires_grad=True) for s in OPT_SHAPES]
    for i, (p, g) in enumerate(zip(params, grads)):
        out[f"clip.grad.{i}"] = g.clone()
        p.grad = g.clone()
    norm = torch.nn.utils.clip_grad_norm_(params, 1.0)
    out["clip.norm"] = norm.detach().reshape(())
    for i, p in enumerate(params):
        out[f"clip.clipped.{i}"] = p.grad.detach().clone()

    # nanoGPT's get_lr (train.py)
    def get_lr(it, learning_rate, min_lr, warmup_iters, lr_decay_iters):
        if it < warmup_iters:
            return learning_rate * (it + 1) / (warmup_iters + 1)
        if it > lr_decay_iters:
            return min_lr
        decay_ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
        assert 0 <= decay_ratio <= 1
        coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
        return min_lr + coeff * (learning_rate - min_lr)

    cosine = []
    for (lr, min_lr, warm, decay) in [(1e-3, 1e-4, 100, 2000), (6e-4, 6e-5, 2000, 600000), (1.0, 0.0, 0, 10)]:
        its = sorted(set([0, 1, warm - 1, warm, warm + 1, (warm + decay) // 2, decay - 1, decay, decay + 1, decay + 1000]))
        its = [i for i in its if i >= 0]
        cosine.append({"max_lr": lr, "min_lr": min_lr, "warmup": warm, "decay": decay,
                       "its": its, "lrs": [get_lr(i, lr, min_lr, warm, decay) for i in its]})
    meta = {"cases": json.dumps(OPT_CASES), "steps": str(OPT_STEPS), "shapes": json.dumps(OPT_SHAPES),
            "cosine": json.dumps(cosine)}
    save_safetensors(os.path.join(OUT, "optim.safetensors"), out, meta)


# --------------------------------------------------------------------------
# containers: Sequential, ModuleList, a user module of named children


class Net(nn.Module):
    """A user-defined module of named children, as nn.Container builds one."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(3, 5)
        self.layers = nn.ModuleList([nn.Linear(5, 5), nn.Linear(5, 5, bias=False)])
        self.act = nn.GELU()
        self.head = nn.Sequential(nn.Linear(5, 2), nn.Sigmoid())

    def forward(self, x):
        x = self.act(self.embed(x))
        for layer in self.layers:
            x = torch.tanh(layer(x))
        return self.head(x)


def container_case(name, model, x):
    save_safetensors(os.path.join(OUT, f"{name}.safetensors"), dict(model.state_dict()))
    x = x.clone().requires_grad_(True)
    y = model(x)
    g = torch.randn(y.shape)
    (y * g).sum().backward()
    out = {"x": x.detach(), "g": g, "y": y.detach(), "grad_x": x.grad.detach()}
    for pn, p in model.named_parameters():
        out[f"grad.{pn}"] = p.grad.detach().clone()
    meta = {"named_parameters": json.dumps([pn for pn, _ in model.named_parameters()])}
    save_safetensors(os.path.join(OUT, f"{name}_golden.safetensors"), out, meta)


def load_safetensors(path):
    """Reads a safetensors file (F32 and I64 only) into a dict of tensors."""
    with open(path, "rb") as f:
        b = f.read()
    (n,) = struct.unpack("<Q", b[:8])
    header = json.loads(b[8:8 + n])
    out = {}
    for name, v in header.items():
        if name == "__metadata__":
            continue
        dt = {"F32": torch.float32, "I64": torch.int64}[v["dtype"]]
        start, end = v["data_offsets"]
        data = bytearray(b[8 + n + start:8 + n + end])
        out[name] = torch.frombuffer(data, dtype=dt).reshape(v["shape"]).clone() if data else torch.zeros(v["shape"], dtype=dt)
    return out


def wick_sequential():
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8), nn.Tanh(),
                         nn.Linear(8, 6), nn.GELU(), nn.Linear(6, 3), nn.Sigmoid())


def gen_containers():
    torch.manual_seed(11)
    container_case("sequential", wick_sequential(), torch.randn(5, 4))
    container_case("container", Net(), torch.randn(2, 3, 3))

    # the other direction: Wick's file, loaded by name into PyTorch
    seq = wick_sequential()
    seq.load_state_dict(load_safetensors(os.path.join(OUT, "sequential_wick.safetensors")), strict=True)
    x = torch.randn(5, 4)
    save_safetensors(os.path.join(OUT, "sequential_wick_golden.safetensors"), {"x": x, "y": seq(x).detach()})


# --------------------------------------------------------------------------
# losses


def gen_losses():
    torch.manual_seed(12)
    F = torch.nn.functional
    x = torch.randn(3, 4)
    t = torch.randn(3, 4)
    t[0, 1] = x[0, 1]  # a tie: L1's gradient is sign(0) = 0 there
    xb = torch.randn(3, 4) * 2
    xb[1, 2] = 0.0  # the kink of max(x, 0) in the stable formula
    tb = torch.rand(3, 4)
    tb[0] = torch.tensor([0.0, 1.0, 0.0, 1.0])
    logp2 = torch.log_softmax(torch.randn(5, 4), dim=1)
    tgt2 = torch.tensor([0, 3, 1, 1, 2])
    logp3 = torch.log_softmax(torch.randn(2, 4, 3), dim=1)  # (N, C, d)
    tgt3 = torch.tensor([[0, 3, 2], [1, 1, 0]])
    cases = [
        ("mse", x, t, F.mse_loss),
        ("l1", x, t, F.l1_loss),
        ("bce_logits", xb, tb, F.binary_cross_entropy_with_logits),
        ("nll", logp2, tgt2, F.nll_loss),
        ("nll3d", logp3, tgt3, F.nll_loss),
    ]
    out = {}
    for name, xin, tin, fn in cases:
        out[f"{name}.x"] = xin
        out[f"{name}.target"] = tin
        for red in ("mean", "sum", "none"):
            xr = xin.clone().requires_grad_(True)
            tr = tin.clone().requires_grad_(True) if tin.dtype == torch.float32 else tin
            y = fn(xr, tr, reduction=red)
            g = torch.randn(y.shape)
            (y * g).sum().backward()
            key = f"{name}.{red}"
            out[f"{key}.g"] = g
            out[f"{key}.y"] = y.detach()
            out[f"{key}.grad_x"] = xr.grad.detach()
            if tin.dtype == torch.float32:
                out[f"{key}.grad_target"] = tr.grad.detach()
    save_safetensors(os.path.join(OUT, "losses.safetensors"), out)


# --------------------------------------------------------------------------
# optimizer defaults


def gen_optim_defaults():
    torch.manual_seed(13)
    p = [torch.zeros(1, requires_grad=True)]
    defaults = {}
    for kind, cls in (("AdamW", torch.optim.AdamW), ("Adam", torch.optim.Adam)):
        d = cls(p).defaults
        defaults[kind] = {"lr": d["lr"], "beta1": d["betas"][0], "beta2": d["betas"][1],
                          "eps": d["eps"], "weight_decay": d["weight_decay"]}
    out = {}
    for name, kwargs in (("adamw_defaults", {}), ("adamw_beta1_zero", {"betas": (0.0, 0.999), "weight_decay": 0.0})):
        params = [torch.randn(s).requires_grad_(True) for s in OPT_SHAPES]
        for i, q in enumerate(params):
            out[f"{name}.init.{i}"] = q.detach().clone()
        opt = torch.optim.AdamW(params, **kwargs)
        for k in range(OPT_STEPS):
            for i, q in enumerate(params):
                g = torch.randn(q.shape)
                out[f"{name}.grad.{k}.{i}"] = g
                q.grad = g.clone()
            opt.step()
            for i, q in enumerate(params):
                out[f"{name}.after.{k}.{i}"] = q.detach().clone()
    meta = {"defaults": json.dumps(defaults), "steps": str(OPT_STEPS)}
    save_safetensors(os.path.join(OUT, "optim_defaults.safetensors"), out, meta)


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    gen_modules()
    gen_gpt(True)
    gen_gpt(False)
    gen_optim()
    gen_containers()
    gen_losses()
    gen_optim_defaults()
