#!/usr/bin/env python3
"""PyTorch peer of cmd/gpubench: the same GPT training step on the same shapes.

Run with a Python that has PyTorch (on a lent GPU machine, its python3; on
the development machine, /usr/bin/python3), e.g.

    python3 scripts/gpubench_peer.py --preset baby,gpt2

The model is nanoGPT's GPT (model.py) written out here: token + position
embeddings, n_layer pre-LayerNorm blocks of causal self-attention and a GELU
MLP, a final LayerNorm and a head tied to the token embedding. Attention
uses torch's fused scaled_dot_product_attention when it exists (PyTorch 2),
as nanoGPT does, else the explicit matmul + mask + softmax. Everything runs
in float32; TF32 is off unless --tf32 (Wick's default too). Each iteration
draws random tokens, runs forward, backward, clips the gradient norm to 1,
takes an AdamW step (lr 1e-3, betas (0.9, 0.99), weight decay 0.1 on >=2-D
weights) and zeroes the gradients. After --warmup iterations it times
--iters more and prints one line per preset:

    torch preset=baby device=cuda ms/iter=20.10 tokens/s=815000 loss=4.2001 attention=sdpa
"""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

PRESETS = {
    "baby": dict(vocab_size=65, block_size=256, n_layer=6, n_head=6, n_embd=384, dropout=0.2, bias=False, batch=64),
    "gpt2": dict(vocab_size=50257, block_size=1024, n_layer=12, n_head=12, n_embd=768, dropout=0.0, bias=True, batch=8),
}
HAS_SDPA = hasattr(F, "scaled_dot_product_attention")


class Config:
    def __init__(self, **kw):
        self.__dict__.update(kw)


class LayerNorm(nn.Module):
    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, x):
        return F.layer_norm(x, self.weight.shape, self.weight, self.bias, 1e-5)


class CausalSelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c_attn = nn.Linear(c.n_embd, 3 * c.n_embd, bias=c.bias)
        self.c_proj = nn.Linear(c.n_embd, c.n_embd, bias=c.bias)
        self.attn_dropout = nn.Dropout(c.dropout)
        self.resid_dropout = nn.Dropout(c.dropout)
        self.n_head, self.n_embd, self.dropout = c.n_head, c.n_embd, c.dropout
        if not HAS_SDPA:
            mask = torch.tril(torch.ones(c.block_size, c.block_size))
            self.register_buffer("mask", mask.view(1, 1, c.block_size, c.block_size))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        if HAS_SDPA:
            y = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout if self.training else 0, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.mask[:, :, :T, :T] == 0, float("-inf"))
            att = self.attn_dropout(F.softmax(att, dim=-1))
            y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.ln_1 = LayerNorm(c.n_embd, c.bias)
        self.attn = CausalSelfAttention(c)
        self.ln_2 = LayerNorm(c.n_embd, c.bias)
        self.c_fc = nn.Linear(c.n_embd, 4 * c.n_embd, bias=c.bias)
        self.c_proj = nn.Linear(4 * c.n_embd, c.n_embd, bias=c.bias)
        self.drop = nn.Dropout(c.dropout)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.drop(self.c_proj(F.gelu(self.c_fc(self.ln_2(x)))))


class GPT(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.wte = nn.Embedding(c.vocab_size, c.n_embd)
        self.wpe = nn.Embedding(c.block_size, c.n_embd)
        self.drop = nn.Dropout(c.dropout)
        self.h = nn.ModuleList([Block(c) for _ in range(c.n_layer)])
        self.ln_f = LayerNorm(c.n_embd, c.bias)
        self.lm_head = nn.Linear(c.n_embd, c.vocab_size, bias=False)
        self.lm_head.weight = self.wte.weight
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight"):
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * c.n_layer))
            elif p.dim() >= 2:
                torch.nn.init.normal_(p, mean=0.0, std=0.02)
            elif name.endswith("bias"):
                torch.nn.init.zeros_(p)

    def forward(self, idx, targets):
        t = idx.size(1)
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = self.drop(self.wte(idx) + self.wpe(pos))
        for block in self.h:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)


def bench(name, device, warmup, iters, batch):
    p = dict(PRESETS[name])
    b = batch or p.pop("batch")
    p.pop("batch", None)
    c = Config(**p)
    torch.manual_seed(1337)
    model = GPT(c).to(device)
    params = [q for q in model.parameters()]
    decay = [q for q in params if q.dim() >= 2]
    no_decay = [q for q in params if q.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=1e-3, betas=(0.9, 0.99))

    def step():
        x = torch.randint(0, c.vocab_size, (b, c.block_size), device=device)
        y = torch.randint(0, c.vocab_size, (b, c.block_size), device=device)
        loss = model(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    def sync():
        if device.startswith("cuda"):
            torch.cuda.synchronize()

    for _ in range(warmup):
        step().item()
    sync()
    t0 = time.time()
    for _ in range(iters):
        loss = step()
    l = loss.item()
    sync()
    dt = (time.time() - t0) / iters
    print("torch preset=%s device=%s ms/iter=%.2f tokens/s=%.0f loss=%.4f attention=%s"
          % (name, device, dt * 1e3, b * c.block_size / dt, l, "sdpa" if HAS_SDPA else "matmul"), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", default="baby,gpt2")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--batch_size", type=int, default=0)
    ap.add_argument("--tf32", action="store_true")
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = a.tf32
    torch.backends.cudnn.allow_tf32 = a.tf32
    for name in a.preset.split(","):
        bench(name, a.device, a.warmup, a.iters, a.batch_size)


if __name__ == "__main__":
    main()
