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
    a = ap.parse_args()
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
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
