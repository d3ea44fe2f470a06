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

The GPT model below is nanoGPT's model.py (GPT, Block, CausalSelfAttention,
MLP, LayerNorm), written out here because torch 1.13 has no
scaled_dot_product_attention: it takes nanoGPT's non-flash path.
"""

import json
import math
import os
import struct

import torch
import torch.nn as nn
from torch.nn import functional as F

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
# nanoGPT's model


class GPTConfig:
    def __init__(self, block_size=16, vocab_size=65, n_layer=2, n_head=2, n_embd=32, dropout=0.0, bias=True):
        self.block_size = block_size
        self.vocab_size = vocab_size
        self.n_layer = n_layer
        self.n_head = n_head
        self.n_embd = n_embd
        self.dropout = dropout
        self.bias = bias


class LayerNorm(nn.Module):
    """LayerNorm with an optional bias."""

    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, input):
        return F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)


class CausalSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        assert config.n_embd % config.n_head == 0
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.attn_dropout = nn.Dropout(config.dropout)
        self.resid_dropout = nn.Dropout(config.dropout)
        self.n_head = config.n_head
        self.n_embd = config.n_embd
        self.dropout = config.dropout
        # no flash attention in torch 1.13: the causal mask is a buffer
        self.register_buffer("bias", torch.tril(torch.ones(config.block_size, config.block_size))
                             .view(1, 1, config.block_size, config.block_size))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        att = self.attn_dropout(att)
        y = att @ v  # (B, nh, T, hs)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.ln_1 = LayerNorm(config.n_embd, bias=config.bias)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = LayerNorm(config.n_embd, bias=config.bias)
        self.mlp = MLP(config)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


class GPT(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(config.vocab_size, config.n_embd),
            wpe=nn.Embedding(config.block_size, config.n_embd),
            drop=nn.Dropout(config.dropout),
            h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
            ln_f=LayerNorm(config.n_embd, bias=config.bias),
        ))
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # weight tying
        self.apply(self._init_weights)
        for pn, p in self.named_parameters():
            if pn.endswith("c_proj.weight"):
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        b, t = idx.size()
        assert t <= self.config.block_size
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        tok_emb = self.transformer.wte(idx)
        pos_emb = self.transformer.wpe(pos)
        x = self.transformer.drop(tok_emb + pos_emb)
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        if targets is not None:
            logits = self.lm_head(x)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        else:
            logits = self.lm_head(x[:, [-1], :])
            loss = None
        return logits, loss

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):
        for _ in range(max_new_tokens):
            idx_cond = idx if idx.size(1) <= self.config.block_size else idx[:, -self.config.block_size:]
            logits, _ = self(idx_cond)
            logits = logits[:, -1, :] / temperature
            if top_k is not None:
                v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                logits[logits < v[:, [-1]]] = -float("Inf")
            probs = F.softmax(logits, dim=-1)
            idx_next = torch.multinomial(probs, num_samples=1)
            idx = torch.cat((idx, idx_next), dim=1)
        return idx


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
    cfg = GPTConfig(n_embd=32, n_head=2, block_size=16, bias=True)
    module_case(out, "attention", CausalSelfAttention(cfg), torch.randn(2, 8, 32))
    cfg = GPTConfig(n_embd=32, n_head=4, block_size=16, bias=False)
    module_case(out, "block", Block(cfg), torch.randn(2, 8, 32))
    # buffers are not parameters: drop the masks
    save_safetensors(os.path.join(OUT, "modules.safetensors"), out)


def gen_gpt(bias):
    torch.manual_seed(1337 if bias else 42)
    cfg = GPTConfig(vocab_size=65, block_size=16, n_layer=2, n_head=2, n_embd=32, dropout=0.0, bias=bias)
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


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    gen_modules()
    gen_gpt(True)
    gen_gpt(False)
    gen_optim()
