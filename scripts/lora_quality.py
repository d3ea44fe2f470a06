#!/usr/bin/env python3
"""LoRA quality check: Wick's `train --lora_rank` against a PyTorch
transcription of the same fine-tune (PEFT's LoRA math, as in
gen_golden_lora.py, on the Llama transcription of gen_golden_llama.py).
Not run by CI: it trains for minutes.

It writes a small random Llama-family model in the hub layout (config.json,
model.safetensors, a byte-level vocab.json with no merges, so a token is a
byte in both programs), fine-tunes LoRA adapters on it with the same recipe
in Wick (the CLI) and in PyTorch, and prints both validation losses (the
mean over --eval_iters random batches of the last 10% of the text, as
train evaluates). The base model is random, not pretrained: the adapters
carry all the learning, which makes the comparison stricter.

  /usr/bin/python3 scripts/lora_quality.py --data=../shared/data/tinyshakespeare.txt --iters=2000

Run with /usr/bin/python3 (Debian's python3-torch 1.13) from the repository
root; it runs `go run ./cmd/train`.
"""

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_golden_llama as llama  # noqa: E402

TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def bytes_to_unicode():
    """GPT-2's printable stand-ins for the 256 bytes."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def write_base(d, cfg, seed):
    gen = torch.Generator().manual_seed(seed)
    p = llama.make_params(cfg, gen)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    llama.write_safetensors(os.path.join(d, "model.safetensors"), p, {"format": "pt"})
    with open(os.path.join(d, "vocab.json"), "w") as f:
        json.dump({c: b for b, c in bytes_to_unicode().items()}, f)
    with open(os.path.join(d, "merges.txt"), "w") as f:
        f.write("#version: 0.2\n")
    return p


def lr_at(it, a):
    """nanoGPT's warmup + cosine, as train's optim.CosineLR."""
    if it < a.warmup:
        return a.lr * (it + 1) / (a.warmup + 1)
    if it > a.iters:
        return a.min_lr
    ratio = (it - a.warmup) / (a.iters - a.warmup)
    return a.min_lr + 0.5 * (1 + math.cos(math.pi * ratio)) * (a.lr - a.min_lr)


def torch_run(cfg, p, ids, a):
    torch.manual_seed(a.seed)
    n = len(ids)
    cut = int(n * 0.9)
    train, val = ids[:cut], ids[cut:]
    adapters = {}
    for i in range(cfg["num_hidden_layers"]):
        for t in TARGETS:
            sub = "self_attn." if t.endswith(("q_proj", "k_proj", "v_proj", "o_proj")) else "mlp."
            name = "model.layers.%d.%s%s" % (i, sub, t)
            w = p[name + ".weight"]
            out, inp = w.shape
            A = torch.empty(a.rank, inp)
            torch.nn.init.kaiming_uniform_(A, a=math.sqrt(5))
            adapters[name] = (A.requires_grad_(), torch.zeros(out, a.rank, requires_grad=True))
    scaling = a.alpha / a.rank
    plain = llama.linear

    def lora_linear(x, params, name):
        y = plain(x, params, name)
        if name in adapters:
            A, B = adapters[name]
            y = y + (x @ A.t()) @ B.t() * scaling
        return y

    llama.linear = lora_linear
    params = [t for ab in adapters.values() for t in ab]
    opt = torch.optim.AdamW(params, lr=a.lr, betas=(0.9, 0.99), eps=1e-8, weight_decay=a.weight_decay)

    def batch(src, g):
        off = torch.randint(len(src) - a.block, (a.batch,), generator=g)
        x = torch.stack([src[o:o + a.block] for o in off])
        y = torch.stack([src[o + 1:o + 1 + a.block] for o in off])
        return x, y

    def loss_of(x, y):
        logits = llama.forward(cfg, p, x)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))

    g = torch.Generator().manual_seed(a.seed)
    for it in range(a.iters):
        for group in opt.param_groups:
            group["lr"] = lr_at(it, a)
        x, y = batch(train, g)
        loss = loss_of(x, y)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        if it % 500 == 0:
            print("torch iter %d: loss %.4f" % (it, loss.item()), flush=True)
    ge = torch.Generator().manual_seed(a.seed + 1)
    with torch.no_grad():
        vals = [loss_of(*batch(val, ge)).item() for _ in range(a.eval_iters)]
        trains = [loss_of(*batch(train, ge)).item() for _ in range(a.eval_iters)]
    llama.linear = plain
    return sum(trains) / len(trains), sum(vals) / len(vals)


def wick_run(base, a, out):
    cmd = ["go", "run", "./cmd/train", "--init_from=" + base, "--data=" + a.data, "--out_dir=" + out,
           "--lora_rank=%d" % a.rank, "--lora_alpha=%g" % a.alpha, "--lora_targets=" + ",".join(TARGETS),
           "--block_size=%d" % a.block, "--batch_size=%d" % a.batch, "--max_iters=%d" % a.iters,
           "--learning_rate=%g" % a.lr, "--min_lr=%g" % a.min_lr, "--warmup_iters=%d" % a.warmup,
           "--lr_decay_iters=%d" % a.iters, "--beta2=0.99", "--weight_decay=%g" % a.weight_decay,
           "--eval_interval=%d" % a.iters, "--eval_iters=%d" % a.eval_iters, "--num_samples=0",
           "--seed=%d" % a.seed, "--progress=plain", "--log_interval=500", "--device=cpu"]
    subprocess.run(cmd, check=True)
    last = None
    with open(os.path.join(out, "log.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            if r.get("kind") == "eval":
                last = r
    return last["train_loss"], last["val_loss"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(HERE, "..", "data", "shakespeare_char", "input.txt"))
    ap.add_argument("--iters", type=int, default=2000)
    ap.add_argument("--rank", type=int, default=8)
    ap.add_argument("--alpha", type=float, default=16)
    ap.add_argument("--block", type=int, default=64)
    ap.add_argument("--batch", type=int, default=12)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--min_lr", type=float, default=1e-4)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--weight_decay", type=float, default=0.1)
    ap.add_argument("--eval_iters", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1337)
    a = ap.parse_args()
    torch.set_num_threads(1)
    cfg = llama.base_config("llama", "LlamaForCausalLM", vocab_size=256, hidden_size=64, intermediate_size=128,
                            num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                            max_position_embeddings=256, bos_token_id=None, eos_token_id=None)
    with open(a.data, "rb") as f:
        ids = torch.tensor(list(f.read()), dtype=torch.long)
    tmp = tempfile.mkdtemp(prefix="lora_quality_")
    base = os.path.join(tmp, "base")
    p = write_base(base, cfg, 7)
    wt, wv = wick_run(base, a, os.path.join(tmp, "wick"))
    tt, tv = torch_run(cfg, p, ids, a)
    print("wick:  train loss %.4f, val loss %.4f" % (wt, wv))
    print("torch: train loss %.4f, val loss %.4f" % (tt, tv))
    print("val loss difference %.4f (target: within 0.05)" % abs(wv - tv))


if __name__ == "__main__":
    main()
