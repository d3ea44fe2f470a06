#!/usr/bin/python3
"""PyTorch peer of cmd/benchgen: text generation at GPT-2 124M shapes.

Run with /usr/bin/python3 (Debian's python3-torch), e.g.

    OPENBLAS_CORETYPE=SkylakeX OMP_NUM_THREADS=1 /usr/bin/python3 scripts/bench_generate_peer.py --mode cache

The model is nanoGPT's GPT (scripts/nanogpt.py) with GPT-2 124M's shapes:
12 layers, 12 heads, 768 wide, vocab 50257, context 1024, bias on,
dropout 0, random weights (nanoGPT's initialisation), in eval mode under
torch.no_grad. Batch 1, a --prompt-token random prompt, --new tokens drawn
with temperature 1 and no top-k.

--mode nocache runs nanoGPT's own generate: the whole context through the
model for every token. --mode cache runs generate_cached below, written
here: nanoGPT's generate with a key/value cache (the prompt's forward pass
keeps every layer's keys and values; each further token runs one position
and attends to them; past block_size it recomputes the cropped window as
nanoGPT does). --check first verifies on a small model (block_size 16) that both
draw the same tokens for the same seed, for prompts shorter than and past
block_size.

--model smollm2-135m times instead a Llama at SmolLM2-135M's shapes (hidden
576, 30 layers, 9 heads, 3 key/value heads, intermediate 1536, vocab 49152,
tied embeddings, rope theta 100000, RMSNorm eps 1e-5, random weights N(0,
0.02)), transcribed below from Hugging Face's modeling_llama (RMSNorm,
rotary embeddings with rotate_half, grouped-query attention with repeat_kv,
SwiGLU MLP) with a key/value cache of past keys and values; only --mode
cache, with --temperature (0: greedy). --check then verifies that cached
generation draws the tokens of full recomputation on a small Llama.

It prints one line in cmd/benchgen's format:

    torch mode=cache threads=1 tokens/s=20.1 ms/token=49.8 prefill_ms=120.3 ttft_ms=2400.0 cpu_ms/token=49.0

tokens/s is --new over the whole generate call (prompt included);
prefill_ms the time of generating one token after the --prompt-token
prompt; ttft_ms the same for a --ttft-token prompt; cpu_ms/token the CPU
time of all threads per generated token. Each is the median of --runs.
"""
import argparse
import math
import os
import statistics
import sys
import time

import torch
from torch.nn import functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nanogpt import GPT, GPTConfig  # noqa: E402


def attend_cached(attn, x, cache, pos):
    """attn's forward for x (B, T, C) at positions pos..pos+T-1, reading and
    extending cache = (k, v), each (B, nh, capacity, hs)."""
    B, T, C = x.size()
    nh = attn.n_head
    hs = C // nh
    q, k, v = attn.c_attn(x).split(C, dim=2)
    q = q.view(B, T, nh, hs).transpose(1, 2)
    ck, cv = cache
    ck[:, :, pos:pos + T] = k.view(B, T, nh, hs).transpose(1, 2)
    cv[:, :, pos:pos + T] = v.view(B, T, nh, hs).transpose(1, 2)
    keys, vals = ck[:, :, :pos + T], cv[:, :, :pos + T]
    att = (q @ keys.transpose(-2, -1)) * (1.0 / math.sqrt(hs))
    if T > 1:
        mask = torch.ones(T, pos + T, dtype=torch.bool).triu(pos + 1)
        att = att.masked_fill(mask, float("-inf"))
    y = F.softmax(att, dim=-1) @ vals
    y = y.transpose(1, 2).contiguous().view(B, T, C)
    return attn.resid_dropout(attn.c_proj(y))


def forward_cached(model, idx, caches, pos):
    """The logits (B, vocab) of the last of idx (B, T) at positions
    pos..pos+T-1, extending the caches."""
    t = idx.size(1)
    tr = model.transformer
    x = tr.drop(tr.wte(idx) + tr.wpe(torch.arange(pos, pos + t, dtype=torch.long)))
    for block, cache in zip(tr.h, caches):
        x = x + attend_cached(block.attn, block.ln_1(x), cache, pos)
        x = x + block.mlp(block.ln_2(x))
    return model.lm_head(tr.ln_f(x[:, [-1], :]))[:, -1, :]


@torch.no_grad()
def generate_cached(model, idx, max_new_tokens, temperature=1.0, top_k=None):
    """nanoGPT's generate with a key/value cache: the same draws."""
    cfg = model.config
    caches, pos = None, 0
    for step in range(max_new_tokens):
        t = idx.size(1)
        if t > cfg.block_size:
            logits, _ = model(idx[:, -cfg.block_size:])
            logits = logits[:, -1, :]
            caches = None
        elif caches is not None and pos == t - 1:
            logits = forward_cached(model, idx[:, -1:], caches, pos)
            pos += 1
        else:
            cap = min(cfg.block_size, t + max_new_tokens - step - 1)
            hs = cfg.n_embd // cfg.n_head
            caches = [(torch.empty(idx.size(0), cfg.n_head, cap, hs), torch.empty(idx.size(0), cfg.n_head, cap, hs))
                      for _ in range(cfg.n_layer)]
            logits = forward_cached(model, idx, caches, 0)
            pos = t
        logits = logits / temperature
        if top_k is not None:
            v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
            logits[logits < v[:, [-1]]] = -float("Inf")
        probs = F.softmax(logits, dim=-1)
        idx_next = torch.multinomial(probs, num_samples=1)
        idx = torch.cat((idx, idx_next), dim=1)
    return idx


class LlamaConfig:
    def __init__(self, vocab=49152, hidden=576, inter=1536, layers=30, heads=9, kv_heads=3, theta=100000.0, eps=1e-5):
        self.vocab_size, self.hidden, self.inter, self.n_layer = vocab, hidden, inter, layers
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, hidden // heads
        self.theta, self.eps = theta, eps


class RMSNorm(torch.nn.Module):
    def __init__(self, n, eps):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(n))
        self.eps = eps

    def forward(self, x):
        var = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(var + self.eps))


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def repeat_kv(x, n):
    """(B, kvh, T, hd) -> (B, kvh*n, T, hd)"""
    if n == 1:
        return x
    b, kvh, t, hd = x.shape
    return x[:, :, None, :, :].expand(b, kvh, n, t, hd).reshape(b, kvh * n, t, hd)


class LlamaLayer(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        hd = c.head_dim
        self.input_layernorm = RMSNorm(c.hidden, c.eps)
        self.q_proj = torch.nn.Linear(c.hidden, c.heads * hd, bias=False)
        self.k_proj = torch.nn.Linear(c.hidden, c.kv_heads * hd, bias=False)
        self.v_proj = torch.nn.Linear(c.hidden, c.kv_heads * hd, bias=False)
        self.o_proj = torch.nn.Linear(c.heads * hd, c.hidden, bias=False)
        self.post_attention_layernorm = RMSNorm(c.hidden, c.eps)
        self.gate_proj = torch.nn.Linear(c.hidden, c.inter, bias=False)
        self.up_proj = torch.nn.Linear(c.hidden, c.inter, bias=False)
        self.down_proj = torch.nn.Linear(c.inter, c.hidden, bias=False)

    def forward(self, x, cos, sin, cache, pos):
        """x (B, T, C) at positions pos..pos+T-1; cache = (k, v), each
        (B, kvh, capacity, hd), extended in place (None: no cache)."""
        c = self.c
        B, T, _ = x.shape
        h = self.input_layernorm(x)
        q = self.q_proj(h).view(B, T, c.heads, c.head_dim).transpose(1, 2)
        k = self.k_proj(h).view(B, T, c.kv_heads, c.head_dim).transpose(1, 2)
        v = self.v_proj(h).view(B, T, c.kv_heads, c.head_dim).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        if cache is not None:
            ck, cv = cache
            ck[:, :, pos:pos + T] = k
            cv[:, :, pos:pos + T] = v
            k, v = ck[:, :, :pos + T], cv[:, :, :pos + T]
        n = c.heads // c.kv_heads
        k, v = repeat_kv(k, n), repeat_kv(v, n)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(c.head_dim))
        if T > 1:
            mask = torch.ones(T, pos + T, dtype=torch.bool).triu(pos + 1)
            att = att.masked_fill(mask, float("-inf"))
        y = F.softmax(att, dim=-1) @ v
        x = x + self.o_proj(y.transpose(1, 2).reshape(B, T, -1))
        h = self.post_attention_layernorm(x)
        return x + self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h))


class Llama(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.embed_tokens = torch.nn.Embedding(c.vocab_size, c.hidden)
        self.layers = torch.nn.ModuleList([LlamaLayer(c) for _ in range(c.n_layer)])
        self.norm = RMSNorm(c.hidden, c.eps)
        self.inv_freq = 1.0 / (c.theta ** (torch.arange(0, c.head_dim, 2, dtype=torch.float32) / c.head_dim))
        for name, p in self.named_parameters():
            if not name.endswith("norm.weight"):
                torch.nn.init.normal_(p, 0.0, 0.02)

    def cos_sin(self, pos, t):
        freqs = torch.outer(torch.arange(pos, pos + t, dtype=torch.float32), self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos(), emb.sin()

    def hidden(self, idx, caches=None, pos=0):
        cos, sin = self.cos_sin(pos, idx.size(1))
        x = self.embed_tokens(idx)
        for i, layer in enumerate(self.layers):
            x = layer(x, cos, sin, caches[i] if caches is not None else None, pos)
        return self.norm(x)

    def forward(self, idx):
        """The logits (B, T, vocab), the head tied to the embedding."""
        return F.linear(self.hidden(idx), self.embed_tokens.weight)


def draw(logits, temperature):
    if temperature == 0:
        return logits.argmax(-1, keepdim=True)
    return torch.multinomial(F.softmax(logits / temperature, dim=-1), num_samples=1)


@torch.no_grad()
def llama_generate_cached(model, idx, max_new_tokens, temperature=1.0):
    c = model.c
    cap = idx.size(1) + max_new_tokens
    caches = [(torch.empty(idx.size(0), c.kv_heads, cap, c.head_dim), torch.empty(idx.size(0), c.kv_heads, cap, c.head_dim))
              for _ in range(c.n_layer)]
    pos, x = 0, idx
    for _ in range(max_new_tokens):
        h = model.hidden(x, caches, pos)
        pos += x.size(1)
        logits = F.linear(h[:, -1, :], model.embed_tokens.weight)
        x = draw(logits, temperature)
        idx = torch.cat((idx, x), dim=1)
    return idx


@torch.no_grad()
def llama_generate_nocache(model, idx, max_new_tokens, temperature=1.0):
    for _ in range(max_new_tokens):
        idx = torch.cat((idx, draw(model(idx)[:, -1, :], temperature)), dim=1)
    return idx


def main_llama(a):
    c = LlamaConfig()
    model = Llama(c)
    model.eval()
    if a.check:
        small = Llama(LlamaConfig(vocab=50, hidden=32, inter=48, layers=2, heads=4, kv_heads=2))
        for plen in (1, 5):
            sp = torch.randint(50, (2, plen))
            for temp in (0.0, 1.0):
                torch.manual_seed(7)
                want = llama_generate_nocache(small, sp, 12, temp)
                torch.manual_seed(7)
                got = llama_generate_cached(small, sp, 12, temp)
                if not torch.equal(want, got):
                    sys.exit("bench_generate_peer.py: cached Llama generation differs from recomputation for a %d-token prompt" % plen)

    def tokens(n):
        return torch.randint(c.vocab_size, (1, n))

    p = tokens(a.prompt)
    long_prompt = tokens(a.ttft) if a.ttft > 0 else None

    def timed(idx, n):
        torch.manual_seed(a.seed)
        t0, c0 = time.perf_counter(), time.process_time()
        llama_generate_cached(model, idx, n, a.temperature)
        return time.perf_counter() - t0, time.process_time() - c0

    timed(p, 2)  # warm-up
    wall, cpu, prefill, first = [], [], [], []
    for _ in range(a.runs):
        w, cp = timed(p, a.new)
        wall.append(w)
        cpu.append(cp)
        prefill.append(timed(p, 1)[0])
        if a.ttft > 0:
            first.append(timed(long_prompt, 1)[0])
    w = statistics.median(wall)
    print("torch model=%s mode=cache threads=%d tokens/s=%.2f ms/token=%.2f prefill_ms=%.1f ttft_ms=%.1f cpu_ms/token=%.2f" % (
        a.model, torch.get_num_threads(), a.new / w, w * 1e3 / a.new, statistics.median(prefill) * 1e3,
        statistics.median(first) * 1e3 if first else 0.0, statistics.median(cpu) * 1e3 / a.new))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["cache", "nocache"], default="cache")
    ap.add_argument("--prompt", type=int, default=64)
    ap.add_argument("--new", type=int, default=256)
    ap.add_argument("--ttft", type=int, default=1024, help="prompt tokens for time to first token (0: skip)")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: leave OMP_NUM_THREADS)")
    ap.add_argument("--seed", type=int, default=1337)
    ap.add_argument("--check", action="store_true", help="first check that both modes draw the same tokens")
    ap.add_argument("--model", choices=["gpt2", "smollm2-135m"], default="gpt2")
    ap.add_argument("--temperature", type=float, default=1.0, help="sampling temperature of --model smollm2-135m (0: greedy)")
    a = ap.parse_args()
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    if a.model == "smollm2-135m":
        if a.mode != "cache":
            sys.exit("bench_generate_peer.py: --model smollm2-135m runs --mode cache only")
        torch.set_grad_enabled(False)
        return main_llama(a)
    cfg = GPTConfig(block_size=1024, vocab_size=50257, n_layer=12, n_head=12, n_embd=768, dropout=0.0, bias=True)
    model = GPT(cfg)
    model.eval()

    def tokens(n):
        return torch.randint(cfg.vocab_size, (1, n))

    def generate(idx, n):
        if a.mode == "cache":
            return generate_cached(model, idx, n)
        return model.generate(idx, n)

    p = tokens(a.prompt)
    long_prompt = tokens(a.ttft) if a.ttft > 0 else None
    if a.check:
        # on a small model of the same code, prompts short and past block_size
        small = GPT(GPTConfig(block_size=16, vocab_size=50, n_layer=2, n_head=2, n_embd=32, dropout=0.0, bias=True))
        small.eval()
        for plen in (1, 5, 16, 20):
            sp = torch.randint(50, (2, plen))
            torch.manual_seed(7)
            want = small.generate(sp, 24)
            torch.manual_seed(7)
            got = generate_cached(small, sp, 24)
            if not torch.equal(want, got):
                sys.exit("bench_generate_peer.py: cached generation differs from nanoGPT's for a %d-token prompt" % plen)

    def timed(idx, n):
        torch.manual_seed(a.seed)
        t0, c0 = time.perf_counter(), time.process_time()
        generate(idx, n)
        return time.perf_counter() - t0, time.process_time() - c0

    timed(p, 2)  # warm-up
    wall, cpu, prefill, first = [], [], [], []
    for _ in range(a.runs):
        w, c = timed(p, a.new)
        wall.append(w)
        cpu.append(c)
        prefill.append(timed(p, 1)[0])
        if a.ttft > 0:
            first.append(timed(long_prompt, 1)[0])
    w = statistics.median(wall)
    print("torch mode=%s threads=%d tokens/s=%.2f ms/token=%.2f prefill_ms=%.1f ttft_ms=%.1f cpu_ms/token=%.2f" % (
        a.mode, torch.get_num_threads(), a.new / w, w * 1e3 / a.new, statistics.median(prefill) * 1e3,
        statistics.median(first) * 1e3 if first else 0.0, statistics.median(cpu) * 1e3 / a.new))


if __name__ == "__main__":
    main()
