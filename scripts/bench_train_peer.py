#!/usr/bin/python3
"""PyTorch peer of cmd/benchtrain: nanoGPT's CPU recipe, timed per iteration.

Run with /usr/bin/python3 (Debian's python3-torch 1.13), e.g.

    OPENBLAS_CORETYPE=SkylakeX OMP_NUM_THREADS=1 /usr/bin/python3 scripts/bench_train_peer.py

The model is nanoGPT's GPT (model.py) written out here without flash
attention (torch 1.13 has none): token + position embeddings, n_layer
pre-LayerNorm blocks of causal self-attention and a GELU MLP, a final
LayerNorm and a head tied to the token embedding, bias=False, dropout 0.
Each iteration draws a random batch of windows of the character-level corpus,
runs forward, backward, clips the gradient norm to 1 and takes an AdamW step
(lr 1e-3, betas (0.9, 0.99), weight decay 0.1 on >=2-D weights, as nanoGPT's
configure_optimizers). After --warmup iterations it times --iters more and
prints one line:

    torch threads=1 ms/iter=66.10 tokens/s=11619 loss=2.51 cpu_ms/iter=66.0

(cpu_ms: CPU time of all threads per iteration.)
"""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


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
        self.n_head, self.n_embd = c.n_head, c.n_embd
        self.register_buffer("bias", torch.tril(torch.ones(c.block_size, c.block_size)).view(1, 1, c.block_size, c.block_size))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c_fc = nn.Linear(c.n_embd, 4 * c.n_embd, bias=c.bias)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * c.n_embd, c.n_embd, bias=c.bias)

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.ln_1 = LayerNorm(c.n_embd, c.bias)
        self.attn = CausalSelfAttention(c)
        self.ln_2 = LayerNorm(c.n_embd, c.bias)
        self.mlp = MLP(c)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(c.vocab_size, c.n_embd),
            wpe=nn.Embedding(c.block_size, c.n_embd),
            h=nn.ModuleList([Block(c) for _ in range(c.n_layer)]),
            ln_f=LayerNorm(c.n_embd, c.bias),
        ))
        self.lm_head = nn.Linear(c.n_embd, c.vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight
        self.apply(self._init_weights)
        for pn, p in self.named_parameters():
            if pn.endswith("c_proj.weight"):
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * c.n_layer))

    def _init_weights(self, m):
        if isinstance(m, nn.Linear):
            torch.nn.init.normal_(m.weight, mean=0.0, std=0.02)
            if m.bias is not None:
                torch.nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Embedding):
            torch.nn.init.normal_(m.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets):
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        logits = self.lm_head(x)
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)


class Config:
    pass


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="/work/shared/data/tinyshakespeare.txt")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: leave OMP_NUM_THREADS)")
    ap.add_argument("--seed", type=int, default=1337)
    a = ap.parse_args()
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)

    text = open(a.data, encoding="utf-8").read()
    chars = sorted(set(text))
    stoi = {ch: i for i, ch in enumerate(chars)}
    data = torch.tensor([stoi[ch] for ch in text], dtype=torch.long)

    c = Config()
    c.vocab_size, c.block_size, c.n_layer, c.n_head, c.n_embd, c.bias = len(chars), 64, 4, 4, 128, False
    batch = 12
    model = GPT(c)
    params = [p for p in model.parameters() if p.requires_grad]
    decay = [p for p in params if p.dim() >= 2]
    nodecay = [p for p in params if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": nodecay, "weight_decay": 0.0}],
                            lr=1e-3, betas=(0.9, 0.99))

    def get_batch():
        ix = torch.randint(len(data) - c.block_size, (batch,))
        x = torch.stack([data[i:i + c.block_size] for i in ix])
        y = torch.stack([data[i + 1:i + 1 + c.block_size] for i in ix])
        return x, y

    def step():
        x, y = get_batch()
        loss = model(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss.item()

    for _ in range(a.warmup):
        step()
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(a.iters):
        loss = step()
    dt = (time.perf_counter() - t0) / a.iters
    cpu = (time.process_time() - c0) / a.iters
    print("torch threads=%d ms/iter=%.2f tokens/s=%.0f loss=%.4f cpu_ms/iter=%.2f" % (torch.get_num_threads(), dt * 1e3, batch * c.block_size / dt, loss, cpu * 1e3))


if __name__ == "__main__":
    main()
