#!/usr/bin/python3
"""PyTorch peer of cmd/benchtrain: nanoGPT's CPU recipe, timed per iteration.

Run with /usr/bin/python3 (Debian's python3-torch 1.13), e.g.

    OPENBLAS_CORETYPE=SkylakeX OMP_NUM_THREADS=1 /usr/bin/python3 scripts/bench_train_peer.py

The model is nanoGPT's GPT (model.py, shared in scripts/nanogpt.py) without
flash attention (flash=False; torch 1.13 has none anyway): token + position
embeddings, n_layer pre-LayerNorm blocks of causal self-attention and a GELU
MLP, a final LayerNorm and a head tied to the token embedding, bias=False,
dropout 0.
Each iteration draws a random batch of windows of the character-level corpus,
runs forward, backward, clips the gradient norm to 1 and takes an AdamW step
(lr 1e-3, betas (0.9, 0.99), weight decay 0.1 on >=2-D weights, as nanoGPT's
configure_optimizers). After --warmup iterations it times --iters more and
prints one line:

    torch threads=1 ms/iter=66.10 tokens/s=11619 loss=2.51 cpu_ms/iter=66.0 cpu_min_ms=64.8

(cpu_ms: CPU time of all threads per iteration; cpu_min_ms: that of the
fastest iteration.)

--model smollm2-135m times instead a full fine-tuning step of the Llama of
scripts/bench_generate_peer.py at SmolLM2-135M's shapes (random weights) on
random tokens, --batch sequences of --block tokens: forward, cross-entropy,
backward, clip to 1, AdamW (lr 1e-4, betas (0.9, 0.99), weight decay 0.1 on
>=2-D weights), zero-grad, as cmd/benchlora's full fine-tune (lora_rank 0)
does. Its line starts "torch model=smollm2-135m".
"""
import argparse
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nanogpt import GPT, GPTConfig  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "shakespeare_char", "input.txt"))
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: leave OMP_NUM_THREADS)")
    ap.add_argument("--seed", type=int, default=1337)
    ap.add_argument("--model", choices=["nanogpt", "smollm2-135m"], default="nanogpt")
    ap.add_argument("--autocast", action="store_true", help="forward pass and loss inside torch.autocast(\"cpu\", dtype=torch.bfloat16), as Wick's train --dtype=bfloat16 (nanoGPT's train.py turns autocast off on the cpu)")
    ap.add_argument("--batch", type=int, default=4, help="sequences per step of --model smollm2-135m")
    ap.add_argument("--block", type=int, default=256, help="tokens per sequence of --model smollm2-135m")
    a = ap.parse_args()
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    if a.model == "smollm2-135m":
        return finetune(a)

    text = open(a.data, encoding="utf-8").read()
    chars = sorted(set(text))
    stoi = {ch: i for i, ch in enumerate(chars)}
    data = torch.tensor([stoi[ch] for ch in text], dtype=torch.long)

    c = GPTConfig(vocab_size=len(chars), block_size=64, n_layer=4, n_head=4, n_embd=128, dropout=0.0, bias=False,
                  flash=False)
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
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.autocast):
            _, loss = model(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss.item()

    for _ in range(a.warmup):
        step()
    t0, c0 = time.perf_counter(), time.process_time()
    cpu_min = float("inf")
    for _ in range(a.iters):
        c1 = time.process_time()
        loss = step()
        cpu_min = min(cpu_min, time.process_time() - c1)
    dt = (time.perf_counter() - t0) / a.iters
    cpu = (time.process_time() - c0) / a.iters
    print("torch autocast=%s threads=%d ms/iter=%.2f tokens/s=%.0f loss=%.4f cpu_ms/iter=%.2f cpu_min_ms=%.2f" % (a.autocast, torch.get_num_threads(), dt * 1e3, batch * c.block_size / dt, loss, cpu * 1e3, cpu_min * 1e3))


def finetune(a):
    from bench_generate_peer import Llama, LlamaConfig
    c = LlamaConfig()
    model = Llama(c)
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    decay = [p for p in params if p.dim() >= 2]
    nodecay = [p for p in params if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": nodecay, "weight_decay": 0.0}],
                            lr=1e-4, betas=(0.9, 0.99))

    def step():
        ids = torch.randint(c.vocab_size, (a.batch, a.block + 1))
        x, y = ids[:, :-1], ids[:, 1:]
        logits = model(x)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, c.vocab_size), y.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss.item()

    for _ in range(a.warmup):
        step()
    times = []
    for _ in range(a.iters):
        t0 = time.perf_counter()
        loss = step()
        times.append(time.perf_counter() - t0)
    dt = sum(times) / len(times)
    print("torch model=smollm2-135m threads=%d batch=%d block=%d ms/step=%.0f min_ms=%.0f tokens/s=%.1f loss=%.4f" % (
        torch.get_num_threads(), a.batch, a.block, dt * 1e3, min(times) * 1e3, a.batch * a.block / dt, loss))


if __name__ == "__main__":
    main()
