#!/usr/bin/env python3
"""Goldens for Wick's LoRA adapters (nn.ApplyLoRA, SaveAdapter, LoadAdapter).

PEFT cannot be installed here, so this is a PyTorch transcription of PEFT's
LoRA math for nn.Linear layers (peft/tuners/lora/layer.py and
tuners_utils.check_target_module_exists, read and rewritten, not copied):

  target match   a list matches a module whose name equals an entry or ends
                 in "." + entry; a string must re.fullmatch the name
  layer          y = base(x) + lora_B(lora_A(dropout(x))) * (lora_alpha / r)
  init           lora_A kaiming_uniform_(a=sqrt(5)), lora_B zeros
  saved names    base_model.model.<module>.lora_A.weight [r, in],
                 .lora_B.weight [out, r]; adapter_config.json beside it

The base model is nanoGPT's GPT in testdata/nn/gpt_bias.safetensors (Wick's
layout: Linear weights [out, in], so fan_in_fan_out is false).

It writes, under testdata/lora/:
  peft_adapter/          an adapter in PEFT's layout (r=4, alpha=8, targets
                         c_attn and c_fc, random A and B)
  peft_golden.safetensors  idx, targets, logits and loss of the model with
                         that adapter, and grad.<name> of every adapter
                         parameter (PEFT's saved names) after loss.backward()
And it checks testdata/lora/wick_adapter/ (written by Wick's
TestLoRAWickFixture with -update-lora): applied here, that adapter gives the
logits Wick stored beside it (wick_logits.safetensors), within 1e-4.

Run with /usr/bin/python3 (Debian's python3-torch 1.13).
"""

import json
import math
import os
import re
import sys

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from gen_golden_nn import load_safetensors, save_safetensors  # noqa: E402
from nanogpt import GPT, GPTConfig  # noqa: E402

torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)

ROOT = os.path.join(HERE, "..")
OUT = os.path.join(ROOT, "testdata", "lora")
PREFIX = "base_model.model."


def target_matches(target_modules, key):
    if isinstance(target_modules, str):
        return re.fullmatch(target_modules, key) is not None
    return key in target_modules or any(key.endswith("." + t) for t in target_modules)


class LoraLinear(nn.Module):
    def __init__(self, base, r, alpha, dropout):
        super().__init__()
        self.base = base
        self.lora_A = nn.Linear(base.in_features, r, bias=False)
        self.lora_B = nn.Linear(r, base.out_features, bias=False)
        self.drop = nn.Dropout(dropout) if dropout > 0 else nn.Identity()
        self.scaling = alpha / r
        nn.init.kaiming_uniform_(self.lora_A.weight, a=math.sqrt(5))
        nn.init.zeros_(self.lora_B.weight)

    def forward(self, x):
        return self.base(x) + self.lora_B(self.lora_A(self.drop(x))) * self.scaling


def apply_lora(model, cfg):
    """Replaces the matching Linear layers; returns {module name: LoraLinear}."""
    names = [n for n, m in model.named_modules() if n and target_matches(cfg["target_modules"], n)]
    if not names:
        raise ValueError(f"target modules {cfg['target_modules']} match nothing")
    out = {}
    for n in names:
        parent_name, _, attr = n.rpartition(".")
        parent = model.get_submodule(parent_name) if parent_name else model
        base = getattr(parent, attr)
        assert isinstance(base, nn.Linear), n
        layer = LoraLinear(base, cfg["r"], cfg["lora_alpha"], cfg["lora_dropout"])
        setattr(parent, attr, layer)
        out[n] = layer
    for p in model.parameters():
        p.requires_grad_(False)
    for layer in out.values():
        layer.lora_A.weight.requires_grad_(True)
        layer.lora_B.weight.requires_grad_(True)
    return out


def adapter_state(layers):
    sd = {}
    for n, l in layers.items():
        sd[f"{PREFIX}{n}.lora_A.weight"] = l.lora_A.weight.detach().clone()
        sd[f"{PREFIX}{n}.lora_B.weight"] = l.lora_B.weight.detach().clone()
    return sd


def load_adapter(model, d):
    with open(os.path.join(d, "adapter_config.json")) as f:
        cfg = json.load(f)
    assert cfg["peft_type"] == "LORA" and cfg["bias"] == "none"
    layers = apply_lora(model, cfg)
    sd = load_safetensors(os.path.join(d, "adapter_model.safetensors"))
    assert set(sd) == set(adapter_state(layers)), sorted(sd)
    with torch.no_grad():
        for n, l in layers.items():
            l.lora_A.weight.copy_(sd[f"{PREFIX}{n}.lora_A.weight"])
            l.lora_B.weight.copy_(sd[f"{PREFIX}{n}.lora_B.weight"])
    return layers


def base_model():
    cfg = GPTConfig(vocab_size=65, block_size=16, n_layer=2, n_head=2, n_embd=32, dropout=0.0, bias=True, flash=False)
    model = GPT(cfg)
    sd = load_safetensors(os.path.join(ROOT, "testdata", "nn", "gpt_bias.safetensors"))
    model.load_state_dict(sd, strict=False)
    model.eval()
    return model


def gen_peft():
    torch.manual_seed(30)
    model = base_model()
    cfg = {"r": 4, "lora_alpha": 8, "lora_dropout": 0.0, "target_modules": ["c_attn", "c_fc"]}
    layers = apply_lora(model, cfg)
    with torch.no_grad():  # a trained-looking adapter: B non-zero
        for l in layers.values():
            l.lora_B.weight.normal_(0, 0.2)
    d = os.path.join(OUT, "peft_adapter")
    os.makedirs(d, exist_ok=True)
    config = {
        "alpha_pattern": {}, "auto_mapping": None, "base_model_name_or_path": "testdata/nn/gpt_bias",
        "bias": "none", "fan_in_fan_out": False, "inference_mode": True, "init_lora_weights": True,
        "layers_pattern": None, "layers_to_transform": None, "lora_alpha": 8, "lora_dropout": 0.0,
        "modules_to_save": None, "peft_type": "LORA", "r": 4, "rank_pattern": {}, "revision": None,
        "target_modules": ["c_attn", "c_fc"], "task_type": "CAUSAL_LM", "use_dora": False, "use_rslora": False,
    }
    with open(os.path.join(d, "adapter_config.json"), "w") as f:
        json.dump(config, f, indent=2, sort_keys=True)
        f.write("\n")
    save_safetensors(os.path.join(d, "adapter_model.safetensors"), adapter_state(layers), {"format": "pt"})

    idx = torch.randint(0, 65, (2, 16))
    targets = torch.randint(0, 65, (2, 16))
    logits, loss = model(idx, targets)
    loss.backward()
    out = {"idx": idx, "targets": targets, "logits": logits.detach(), "loss": loss.detach()}
    for n, l in layers.items():
        out[f"grad.{n}.lora_A.weight"] = l.lora_A.weight.grad.detach().clone()
        out[f"grad.{n}.lora_B.weight"] = l.lora_B.weight.grad.detach().clone()
    save_safetensors(os.path.join(OUT, "peft_golden.safetensors"), out)


def check_wick():
    d = os.path.join(OUT, "wick_adapter")
    if not os.path.exists(os.path.join(d, "adapter_config.json")):
        print("no", d, "yet: run go test ./nn -run TestLoRAWickFixture -update-lora, then this script again")
        return
    model = base_model()
    load_adapter(model, d)
    want = load_safetensors(os.path.join(OUT, "wick_logits.safetensors"))
    logits, _ = model(want["idx"], want["idx"])
    err = (logits.detach() - want["logits"]).abs().max().item()
    assert err <= 1e-4, f"Wick's adapter applied here: max |logit difference| {err}"
    print(f"wick_adapter: logits match Wick's (max difference {err:.2e})")


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    gen_peft()
    check_wick()
