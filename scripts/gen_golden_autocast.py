#!/usr/bin/python3
"""Writes testdata/autocast/gpt_step.safetensors and llama_step.safetensors:
one training step (loss and every parameter's gradient) of the small nanoGPT
model of testdata/nn/gpt_bias.safetensors and of the small Llama of
testdata/llama/llama_gqa (grouped key/value heads, tied head; the math of
scripts/gen_golden_llama.py) under bfloat16 autocast, for
nn/autocast_test.go.

Run with Debian's python3-torch 1.13: /usr/bin/python3 scripts/gen_golden_autocast.py

Three versions of the same step on the same batch:

  ac.*    torch.autocast("cpu", dtype=torch.bfloat16) around the forward pass
          and the loss, backward after it (nanoGPT's train.py pattern). Its
          products return bfloat16, and the ops that follow them (softmax,
          GELU, the attention scale) then run in bfloat16 too, which Wick's
          autocast does not do (its products return float32): Wick's step
          agrees with this one to bfloat16 tolerances only.
  emu.*   Wick's autocast rules in float32 PyTorch: every product (F.linear
          and @) rounds its operands to bfloat16, multiplies them with
          float32 sums and returns float32; the backward products round the
          output's gradient to bfloat16 and multiply it with the rounded
          operands. Wick's step agrees with this one to float32 tolerances
          (the order of the float32 sums differs).
  fp32.*  the float32 step, for the size of the rounding.

The metadata holds the parameter names in named_parameters order. The
Llama's rotary embedding is computed with autocast off, as Hugging Face's
LlamaRotaryEmbedding does (its frequency product would round otherwise).
"""

import json
import os
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from gen_golden_nn import load_safetensors, save_safetensors  # noqa: E402
from nanogpt import GPT, GPTConfig  # noqa: E402
import gen_golden_llama as L  # noqa: E402

MATMUL = torch.matmul  # before any patching
torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)

OUT = os.path.join(HERE, "..", "testdata", "autocast")


def bf16(x):
    return x.to(torch.bfloat16).to(torch.float32)


class EmuMatMul(torch.autograd.Function):
    """a @ b with Wick's autocast rules (see the module docstring)."""

    @staticmethod
    def forward(ctx, a, b):
        a16, b16 = bf16(a), bf16(b)
        ctx.save_for_backward(a16, b16)
        return MATMUL(a16, b16)

    @staticmethod
    def backward(ctx, g):
        a16, b16 = ctx.saved_tensors
        g16 = bf16(g)
        ga = MATMUL(g16, b16.transpose(-1, -2))
        gb = MATMUL(a16.transpose(-1, -2), g16)
        # sum over broadcast batch dims (F.linear's weight is 2-D)
        while ga.dim() > a16.dim():
            ga = ga.sum(0)
        while gb.dim() > b16.dim():
            gb = gb.sum(0)
        return ga, gb


def emu_linear(x, w, b=None):
    y = EmuMatMul.apply(x, w.t())
    return y if b is None else y + b


def model():
    cfg = GPTConfig(vocab_size=65, block_size=16, n_layer=2, n_head=2, n_embd=32, dropout=0.0, bias=True, flash=False)
    m = GPT(cfg)
    sd = load_safetensors(os.path.join(HERE, "..", "testdata", "nn", "gpt_bias.safetensors"))
    m.load_state_dict(sd, strict=True)
    return m


def step(mode, idx, targets):
    m = model()
    m.train()
    if mode == "ac":
        with torch.autocast("cpu", dtype=torch.bfloat16):
            logits, loss = m(idx, targets)
    elif mode == "emu":
        linear, matmul = F.linear, torch.Tensor.__matmul__
        F.linear = emu_linear
        torch.Tensor.__matmul__ = lambda a, b: EmuMatMul.apply(a, b)
        try:
            logits, loss = m(idx, targets)
        finally:
            F.linear, torch.Tensor.__matmul__ = linear, matmul
    else:
        logits, loss = m(idx, targets)
    loss.backward()
    out = {f"{mode}.loss": loss.detach().float(), f"{mode}.logits": logits.detach().float()}
    names = []
    for pn, p in m.named_parameters():
        out[f"{mode}.grad.{pn}"] = p.grad.detach().clone()
        names.append(pn)
    return out, names


def llama_step(mode, cfg, params, idx, targets):
    p = {k: v.clone().requires_grad_() for k, v in params.items()}
    rope = L.rope_cos_sin

    def rope_fp32(inv, t):
        with torch.autocast("cpu", enabled=False):
            return rope(inv, t)

    L.rope_cos_sin = rope_fp32
    linear, matmul = F.linear, torch.matmul
    try:
        if mode == "ac":
            with torch.autocast("cpu", dtype=torch.bfloat16):
                logits = L.forward(cfg, p, idx)
                v = cfg["vocab_size"]
                loss = F.cross_entropy(logits.reshape(-1, v), targets.reshape(-1), ignore_index=-1)
        else:
            if mode == "emu":
                F.linear, torch.matmul = emu_linear, EmuMatMul.apply
            logits = L.forward(cfg, p, idx)
            v = cfg["vocab_size"]
            loss = F.cross_entropy(logits.reshape(-1, v), targets.reshape(-1), ignore_index=-1)
    finally:
        L.rope_cos_sin = rope
        F.linear, torch.matmul = linear, matmul
    loss.backward()
    out = {f"{mode}.loss": loss.detach().float(), f"{mode}.logits": logits.detach().float()}
    for k, t in p.items():
        out[f"{mode}.grad.{k}"] = t.grad.detach().clone()
    return out


def gen_llama():
    d = os.path.join(HERE, "..", "testdata", "llama", "llama_gqa")
    with open(os.path.join(d, "config.json")) as f:
        cfg = json.load(f)
    params = load_safetensors(os.path.join(d, "model.safetensors"))
    gold = load_safetensors(os.path.join(d, "golden.safetensors"))
    idx, targets = gold["idx"], gold["targets"]
    out = {"idx": idx, "targets": targets}
    for mode in ("ac", "emu", "fp32"):
        out.update(llama_step(mode, cfg, params, idx, targets))
    assert torch.allclose(out["fp32.loss"], gold["loss"], rtol=1e-5), "the transcription's float32 loss is not the golden's"
    names = sorted(params)
    for k in names:
        ref = out[f"fp32.grad.{k}"]
        rel = lambda m: float((out[f"{m}.grad.{k}"] - ref).norm() / ref.norm())  # noqa: E731
        print(f"{k:45s} |ac-fp32|/|fp32| {rel('ac'):.4f}  |emu-fp32|/|fp32| {rel('emu'):.4f}")
    print("llama loss ac %.6f emu %.6f fp32 %.6f" % (out["ac.loss"], out["emu.loss"], out["fp32.loss"]))
    save_safetensors(os.path.join(OUT, "llama_step.safetensors"), out, {"named_parameters": json.dumps(names)})


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.manual_seed(2028)
    idx = torch.randint(0, 65, (4, 16))
    targets = torch.randint(0, 65, (4, 16))
    out = {"idx": idx, "targets": targets}
    names = None
    for mode in ("ac", "emu", "fp32"):
        o, names = step(mode, idx, targets)
        out.update(o)
    for pn in names:  # the size of the rounding, for the record
        ref = out[f"fp32.grad.{pn}"]
        rel = lambda k: float((out[f"{k}.grad.{pn}"] - ref).norm() / ref.norm())  # noqa: E731
        print(f"{pn:40s} |ac-fp32|/|fp32| {rel('ac'):.4f}  |emu-fp32|/|fp32| {rel('emu'):.4f}")
    print("loss ac %.6f emu %.6f fp32 %.6f" % (out["ac.loss"], out["emu.loss"], out["fp32.loss"]))
    save_safetensors(os.path.join(OUT, "gpt_step.safetensors"), out, {"named_parameters": json.dumps(names)})
    gen_llama()


if __name__ == "__main__":
    main()
