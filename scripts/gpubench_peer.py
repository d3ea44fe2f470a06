#!/usr/bin/env python3
"""PyTorch peer of cmd/gpubench: the same GPT training step on the same shapes.

Run with a Python that has PyTorch (on a lent GPU machine, its python3; on
the development machine, /usr/bin/python3), e.g.

    python3 scripts/gpubench_peer.py --preset baby,gpt2

The model is nanoGPT's GPT (model.py, shared in scripts/nanogpt.py), with
nanoGPT's initialisation: token + position embeddings, n_layer pre-LayerNorm
blocks of causal self-attention and a GELU MLP, a final LayerNorm and a head
tied to the token embedding. Attention
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
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nanogpt import GPT, HAS_SDPA, GPTConfig  # noqa: E402

PRESETS = {
    "baby": dict(vocab_size=65, block_size=256, n_layer=6, n_head=6, n_embd=384, dropout=0.2, bias=False, batch=64),
    "gpt2": dict(vocab_size=50257, block_size=1024, n_layer=12, n_head=12, n_embd=768, dropout=0.0, bias=True, batch=8),
}


def bench(name, device, warmup, iters, batch):
    p = dict(PRESETS[name])
    b = batch or p.pop("batch")
    p.pop("batch", None)
    c = GPTConfig(**p)
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
        _, loss = model(x, y)
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
