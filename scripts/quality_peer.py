#!/usr/bin/python3
"""PyTorch peer of cmd/train's quality run: nanoGPT's train.py loop for its
CPU shakespeare_char recipe, logging eval losses in the format of cmd/train's
log.jsonl so that scripts/compare_loss.py can put the two curves side by side.

Run with /usr/bin/python3 (Debian's python3-torch 1.13), e.g.

    OPENBLAS_CORETYPE=Haswell OMP_NUM_THREADS=1 /usr/bin/python3 \\
        scripts/quality_peer.py --out /tmp/quality_peer/log.jsonl

(OPENBLAS_CORETYPE=SkylakeX is faster where it works; on some CPUs it
crashes, Haswell is the safe choice. The kernel choice does not change what
is computed beyond float rounding.)

What it does, following nanoGPT (data/shakespeare_char/prepare.py, train.py,
model.py):
  * data: the characters of the corpus sorted give the vocabulary
    (prepare.py); the first int(0.9*n) tokens are train, the rest val.
  * model: GPT from scripts/nanogpt.py (nanoGPT's model.py) with flash=False
    (nanoGPT's explicit attention path; torch 1.13 has no fused one), bias
    off, seeded with torch.manual_seed(seed) before it is built, as train.py
    does (seed_offset 0, one process).
  * batches: get_batch draws torch.randint(len(data) - block_size,
    (batch_size,)) start offsets from torch's global generator, for training
    and for evaluation alike, in train.py's order: the first training batch
    before the loop (so before the first evaluation), each next one between
    forward and backward of the current step.
  * optimizer: configure_optimizers' two AdamW groups (weight_decay on
    parameters with dim >= 2, none on the rest), betas (beta1, beta2),
    non-fused AdamW (what train.py gets on CPU).
  * learning rate: get_lr, linear warmup (lr*(it+1)/(warmup_iters+1)) then
    cosine decay to min_lr at lr_decay_iters.
  * loop: at every iter_num % eval_interval == 0 (including 0 and max_iters)
    estimate_loss() averages eval_iters batches of each split in eval mode
    under no_grad; then forward, backward, clip_grad_norm_(grad_clip), step,
    zero_grad(set_to_none=True). The loop stops after the evaluation at
    iter_num == max_iters; nanoGPT takes one more (unevaluated) step there,
    which changes none of the logged numbers, so it is skipped.

Each evaluation prints one JSON line to stdout and appends it to --out:

    {"kind":"eval","iter":250,"train_loss":...,"val_loss":...,"train_ppl":...,
     "val_ppl":...,"time_s":...}

and every --log_interval iterations a {"kind":"train",...} line with the
loss, lr and ms per iteration (to --out only). With --final_eval_iters N the
trained model is evaluated once more over N batches per split, logged as
{"kind":"final_eval","iter":max_iters,"eval_iters":N,...} (compare_loss.py
ignores it): a sharper estimate of the final losses, comparable with
`go run ./cmd/train --resume --eval_only --eval_iters N --out_dir DIR` on a
copy of Wick's run directory.
"""
import argparse
import json
import math
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nanogpt import GPT, GPTConfig  # noqa: E402


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=os.path.join(here, "..", "data", "shakespeare_char", "input.txt"))
    ap.add_argument("--out", default="quality_peer_log.jsonl", help="JSON-lines log to write (overwritten)")
    ap.add_argument("--seed", type=int, default=1337)
    ap.add_argument("--n_layer", type=int, default=4)
    ap.add_argument("--n_head", type=int, default=4)
    ap.add_argument("--n_embd", type=int, default=128)
    ap.add_argument("--block_size", type=int, default=64)
    ap.add_argument("--batch_size", type=int, default=12)
    ap.add_argument("--dropout", type=float, default=0.0)
    ap.add_argument("--max_iters", type=int, default=2000)
    ap.add_argument("--lr_decay_iters", type=int, default=2000)
    ap.add_argument("--learning_rate", type=float, default=1e-3)
    ap.add_argument("--min_lr", type=float, default=1e-4)
    ap.add_argument("--warmup_iters", type=int, default=100)
    ap.add_argument("--weight_decay", type=float, default=0.1)
    ap.add_argument("--beta1", type=float, default=0.9)
    ap.add_argument("--beta2", type=float, default=0.99)
    ap.add_argument("--grad_clip", type=float, default=1.0)
    ap.add_argument("--eval_interval", type=int, default=250)
    ap.add_argument("--eval_iters", type=int, default=20)
    ap.add_argument("--log_interval", type=int, default=10)
    ap.add_argument("--final_eval_iters", type=int, default=0,
                    help="after training, one more evaluation over this many batches per split (0: none)")
    ap.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: leave OMP_NUM_THREADS)")
    ap.add_argument("--autocast", action="store_true",
                    help="forward passes inside torch.autocast(\"cpu\", dtype=torch.bfloat16), nanoGPT's ctx for dtype=bfloat16 on a GPU (its train.py uses nullcontext on the cpu), as Wick's train --dtype=bfloat16")
    a = ap.parse_args()
    ctx = torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.autocast)
    if a.threads > 0:
        torch.set_num_threads(a.threads)

    # prepare.py
    text = open(a.data, encoding="utf-8").read()
    chars = sorted(set(text))
    stoi = {ch: i for i, ch in enumerate(chars)}
    data = torch.tensor([stoi[ch] for ch in text], dtype=torch.long)
    n = len(data)
    splits = {"train": data[:int(n * 0.9)], "val": data[int(n * 0.9):]}

    torch.manual_seed(a.seed)
    cfg = GPTConfig(vocab_size=len(chars), block_size=a.block_size, n_layer=a.n_layer, n_head=a.n_head,
                    n_embd=a.n_embd, dropout=a.dropout, bias=False, flash=False)
    model = GPT(cfg)

    # configure_optimizers
    param_dict = {pn: p for pn, p in model.named_parameters() if p.requires_grad}
    decay = [p for p in param_dict.values() if p.dim() >= 2]
    nodecay = [p for p in param_dict.values() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": a.weight_decay},
                             {"params": nodecay, "weight_decay": 0.0}],
                            lr=a.learning_rate, betas=(a.beta1, a.beta2))

    def get_batch(split):
        d = splits[split]
        ix = torch.randint(len(d) - a.block_size, (a.batch_size,))
        x = torch.stack([d[i:i + a.block_size] for i in ix])
        y = torch.stack([d[i + 1:i + 1 + a.block_size] for i in ix])
        return x, y

    @torch.no_grad()
    def estimate_loss(iters):
        out = {}
        model.eval()
        for split in ("train", "val"):
            losses = torch.zeros(iters)
            for k in range(iters):
                x, y = get_batch(split)
                with ctx:
                    _, loss = model(x, y)
                losses[k] = loss.item()
            out[split] = losses.mean().item()
        model.train()
        return out

    def get_lr(it):
        if it < a.warmup_iters:
            return a.learning_rate * (it + 1) / (a.warmup_iters + 1)
        if it > a.lr_decay_iters:
            return a.min_lr
        decay_ratio = (it - a.warmup_iters) / (a.lr_decay_iters - a.warmup_iters)
        assert 0 <= decay_ratio <= 1
        coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
        return a.min_lr + coeff * (a.learning_rate - a.min_lr)

    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    log = open(a.out, "w")

    def emit(rec, echo):
        line = json.dumps(rec, separators=(",", ":"))
        log.write(line + "\n")
        log.flush()
        if echo:
            print(line, flush=True)

    t_start = time.perf_counter()
    t_train = 0.0
    iter_num = 0
    x, y = get_batch("train")  # train.py fetches the very first batch before the loop
    while True:
        lr = get_lr(iter_num)
        for g in opt.param_groups:
            g["lr"] = lr
        if iter_num % a.eval_interval == 0 or iter_num == a.max_iters:
            l = estimate_loss(a.eval_iters)
            emit({"kind": "eval", "iter": iter_num, "train_loss": l["train"], "val_loss": l["val"],
                  "train_ppl": math.exp(l["train"]), "val_ppl": math.exp(l["val"]),
                  "time_s": time.perf_counter() - t_start}, True)
        if iter_num >= a.max_iters:
            break
        t0 = time.perf_counter()
        with ctx:
            _, loss = model(x, y)
        x, y = get_batch("train")  # train.py prefetches the next batch between forward and backward
        loss.backward()
        if a.grad_clip != 0.0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), a.grad_clip)
        opt.step()
        opt.zero_grad(set_to_none=True)
        lossf = loss.item()
        dt = time.perf_counter() - t0
        t_train += dt
        if not math.isfinite(lossf):
            sys.exit("quality_peer: loss is %r at iter %d" % (lossf, iter_num))
        if iter_num % a.log_interval == 0:
            emit({"kind": "train", "iter": iter_num, "loss": lossf, "lr": lr, "ms": dt * 1e3,
                  "tokens_per_sec": a.batch_size * a.block_size / dt,
                  "time_s": time.perf_counter() - t_start}, False)
        iter_num += 1
    if a.final_eval_iters > 0:
        l = estimate_loss(a.final_eval_iters)
        emit({"kind": "final_eval", "iter": iter_num, "eval_iters": a.final_eval_iters,
              "train_loss": l["train"], "val_loss": l["val"], "train_ppl": math.exp(l["train"]),
              "val_ppl": math.exp(l["val"]), "time_s": time.perf_counter() - t_start}, True)
    tps = a.max_iters * a.batch_size * a.block_size / t_train if t_train > 0 else 0.0
    print("torch threads=%d seed=%d iters=%d wall_s=%.1f train_ms/iter=%.2f tokens/s=%.0f" % (
        torch.get_num_threads(), a.seed, a.max_iters, time.perf_counter() - t_start,
        t_train / max(a.max_iters, 1) * 1e3, tps), flush=True)


if __name__ == "__main__":
    main()
