#!/usr/bin/env python3
"""Llama-family goldens for Wick's LoRA adapters in PEFT's layout.

PEFT and transformers cannot be installed here. This script applies the
PyTorch transcription of PEFT's LoRA math of gen_golden_lora.py (target
matching as check_target_module_exists, y = base(x) + lora_B(lora_A(x)) *
lora_alpha / r, saved names base_model.model.<module>.lora_A.weight [r, in]
and .lora_B.weight [out, r]) to the transcription of transformers' Llama
and Qwen3 of gen_golden_llama.py (its forward, with each targeted Linear
replaced by the LoRA one), on two of its committed models:
testdata/llama/llama_gqa and testdata/llama/qwen3.

For each model NAME it writes, under testdata/lora/NAME/:

  peft_adapter/     an adapter written here in PEFT's layout
                    (adapter_config.json, adapter_model.safetensors),
                    random A and B
  golden.safetensors
      idx, targets   [2, 8] input and next tokens (one ignored, -1)
      logits, loss   of the model with peft_adapter
      grad.<name>    d loss / d (each peft_adapter tensor, PEFT's name)
      wick.logits    the logits of the model with the deterministic adapter
                     below (WICK), for idx

WICK is an adapter whose every value is given by a formula, which Wick's
TestLoRALlamaGoldens builds too, saves with SaveAdapter and compares
against wick.logits. With -update-lora that test also writes what it saved
to testdata/lora/NAME/wick_adapter/; when that folder exists this script
loads it as PEFT would (its config's r, lora_alpha and target_modules) and
checks that its tensors are the formula's and that it gives wick.logits
here: so the adapter file Wick writes (the test checks it still writes
those bytes) gives Wick's logits in the transcription.

Run with /usr/bin/python3 (Debian's python3-torch 1.13):

    /usr/bin/python3 scripts/gen_golden_lora_llama.py
"""

import json
import math
import os
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_golden_llama as llama  # noqa: E402
from gen_golden_lora import target_matches  # noqa: E402
from gen_golden_nn import load_safetensors, save_safetensors  # noqa: E402

torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)

ROOT = os.path.join(HERE, "..", "testdata")
PREFIX = "base_model.model."

# name: (the PEFT-side adapter's r, lora_alpha, target_modules,
#        the Wick-side adapter's r, lora_alpha, target_modules)
CASES = {
    "llama_gqa": (4, 8, ["q_proj", "v_proj"], 3, 7, ["k_proj", "o_proj", "up_proj"]),
    "qwen3": (2, 6, ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
              2, 5, ["q_proj", "down_proj", "lm_head"]),
}


def linear_modules(cfg, p):
    """The dotted names of the model's Linear layers, in the model's order."""
    names = []
    for i in range(cfg["num_hidden_layers"]):
        pre = "model.layers.%d." % i
        names += [pre + "self_attn." + n for n in ("q_proj", "k_proj", "v_proj", "o_proj")]
        names += [pre + "mlp." + n for n in ("gate_proj", "up_proj", "down_proj")]
    if "lm_head.weight" in p:
        names.append("lm_head")
    return names


def lora_forward(cfg, p, idx, adapters, scaling):
    """gen_golden_llama.forward with the Linear layers named in adapters
    ({module: (A, B)}) adapted: F.linear(x, W, b) + (x·Aᵀ·Bᵀ)·scaling."""
    plain = llama.linear

    def linear(x, params, name):
        y = plain(x, params, name)
        if name in adapters:
            a, b = adapters[name]
            y = y + F.linear(F.linear(x, a), b) * scaling
        return y

    llama.linear = linear
    try:
        logits = llama.forward(cfg, p, idx)
        if "lm_head" in adapters:  # forward's head is F.linear(x, head) directly
            raise ValueError("lm_head adapters go through lora_logits")
        return logits
    finally:
        llama.linear = plain


def lora_logits(cfg, p, idx, adapters, scaling):
    """lora_forward, with an adapter on an untied lm_head too."""
    if "lm_head" not in adapters:
        return lora_forward(cfg, p, idx, adapters, scaling)
    # the head's input: the logits of a model whose head is the identity
    inner = dict(adapters)
    a, b = inner.pop("lm_head")
    h = p["lm_head.weight"].shape[1]
    q = dict(p)
    q["lm_head.weight"] = torch.eye(h)
    x = lora_forward(cfg, q, idx, inner, scaling)
    return F.linear(x, p["lm_head.weight"]) + F.linear(F.linear(x, a), b) * scaling


def formula(name, shape, index):
    """The deterministic adapter's tensor: element k of the tensor listed
    index-th (PEFT names sorted) is 0.3·(((37k + 11·index) mod 101) − 50)/50,
    computed in float64 and rounded to float32 (as Wick's test does)."""
    n = math.prod(shape)
    k = torch.arange(n, dtype=torch.float64)
    v = 0.3 * (torch.remainder(37 * k + 11 * index, 101) - 50) / 50
    return v.float().reshape(shape)


def wick_adapter(cfg, p, r, targets):
    """{module: (A, B)} of the formula's adapter on targets."""
    mods = [m for m in linear_modules(cfg, p) if target_matches(targets, m)]
    shapes = {}
    for m in mods:
        out_f, in_f = p[m + ".weight"].shape
        shapes[PREFIX + m + ".lora_A.weight"] = (r, in_f)
        shapes[PREFIX + m + ".lora_B.weight"] = (out_f, r)
    values = {n: formula(n, shapes[n], i) for i, n in enumerate(sorted(shapes))}
    return {m: (values[PREFIX + m + ".lora_A.weight"], values[PREFIX + m + ".lora_B.weight"]) for m in mods}, values


def peft_config(r, alpha, targets, base):
    return {
        "alpha_pattern": {}, "auto_mapping": None, "base_model_name_or_path": base,
        "bias": "none", "fan_in_fan_out": False, "inference_mode": True, "init_lora_weights": True,
        "layers_pattern": None, "layers_to_transform": None, "lora_alpha": alpha, "lora_dropout": 0.0,
        "modules_to_save": None, "peft_type": "LORA", "r": r, "rank_pattern": {}, "revision": None,
        "target_modules": targets, "task_type": "CAUSAL_LM", "use_dora": False, "use_rslora": False,
    }


def main():
    for name, (r, alpha, targets, wr, walpha, wtargets) in CASES.items():
        base_dir = os.path.join(ROOT, "llama", name)
        with open(os.path.join(base_dir, "config.json")) as f:
            cfg = json.load(f)
        p = load_safetensors(os.path.join(base_dir, "model.safetensors"))
        out = os.path.join(ROOT, "lora", name)
        os.makedirs(os.path.join(out, "peft_adapter"), exist_ok=True)
        gen = torch.Generator().manual_seed(sum(map(ord, name)) + 30)

        # the PEFT-side adapter: A as PEFT initialises it
        # (kaiming_uniform_(a=√5): uniform in ±1/√in), B non-zero as
        # after training
        adapters, sd = {}, {}
        for m in linear_modules(cfg, p):
            if not target_matches(targets, m):
                continue
            out_f, in_f = p[m + ".weight"].shape
            bound = 1 / math.sqrt(in_f)
            a = ((torch.rand(r, in_f, generator=gen) * 2 - 1) * bound).requires_grad_()
            b = (torch.randn(out_f, r, generator=gen) * 0.3).requires_grad_()
            adapters[m] = (a, b)
            sd[PREFIX + m + ".lora_A.weight"], sd[PREFIX + m + ".lora_B.weight"] = a, b
        with open(os.path.join(out, "peft_adapter", "adapter_config.json"), "w") as f:
            json.dump(peft_config(r, alpha, targets, "testdata/llama/" + name), f, indent=2, sort_keys=True)
            f.write("\n")
        save_safetensors(os.path.join(out, "peft_adapter", "adapter_model.safetensors"), sd, {"format": "pt"})

        v = cfg["vocab_size"]
        ids = torch.randint(0, v, (2, 9), generator=gen)
        idx, tgt = ids[:, :8].contiguous(), ids[:, 1:].clone()
        tgt[0, 5] = -1
        logits = lora_logits(cfg, p, idx, adapters, alpha / r)
        loss = F.cross_entropy(logits.reshape(-1, v), tgt.reshape(-1), ignore_index=-1)
        loss.backward()
        golden = {"idx": idx, "targets": tgt, "logits": logits.detach(), "loss": loss.detach()}
        for n, t in sd.items():
            golden["grad." + n] = t.grad.detach().clone()

        # the Wick-side adapter
        wa, wvalues = wick_adapter(cfg, p, wr, wtargets)
        with torch.no_grad():
            wl = lora_logits(cfg, p, idx, wa, walpha / wr)
        golden["wick.logits"] = wl
        save_safetensors(os.path.join(out, "golden.safetensors"), golden)
        print("%s: PEFT-side loss %.6f over %d adapter tensors; Wick-side adapter %d tensors" % (name, loss.item(), len(sd), len(wvalues)))
        check_wick(name, cfg, p, idx, wl, wr, walpha, wtargets, wvalues)


def check_wick(name, cfg, p, idx, want, r, alpha, targets, values):
    d = os.path.join(ROOT, "lora", name, "wick_adapter")
    if not os.path.exists(os.path.join(d, "adapter_config.json")):
        print("  no %s yet: run go test ./nn -run TestLoRALlamaGoldens -update-lora, then this script again" % d)
        return
    with open(os.path.join(d, "adapter_config.json")) as f:
        c = json.load(f)
    assert c["peft_type"] == "LORA" and c["bias"] == "none" and not c["fan_in_fan_out"], c
    assert (c["r"], c["lora_alpha"], c["target_modules"]) == (r, alpha, targets), c
    sd = load_safetensors(os.path.join(d, "adapter_model.safetensors"))
    assert set(sd) == set(values), sorted(set(sd) ^ set(values))
    for n, t in sd.items():
        assert torch.equal(t, values[n]), n
    adapters = {}
    for m in linear_modules(cfg, p):
        if target_matches(c["target_modules"], m):
            adapters[m] = (sd[PREFIX + m + ".lora_A.weight"], sd[PREFIX + m + ".lora_B.weight"])
    with torch.no_grad():
        got = lora_logits(cfg, p, idx, adapters, c["lora_alpha"] / c["r"])
    err = (got - want).abs().max().item()
    assert err <= 1e-6, "%s: Wick's adapter applied here: max |logit difference| %g" % (name, err)
    print("  wick_adapter: Wick's saved adapter applied here gives wick.logits (max difference %.2e)" % err)


if __name__ == "__main__":
    main()
