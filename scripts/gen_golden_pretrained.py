#!/usr/bin/python3
"""Generate the pretrained-checkpoint goldens of nn.LoadPretrained from PyTorch.

Run with the system Python, which has PyTorch 1.13 (Debian's python3-torch;
scripts/setup_peer.sh installs it):

    /usr/bin/python3 scripts/gen_golden_pretrained.py

No machine here can download from the Hugging Face hub, and the transformers
package is not installed, so this script builds a small random GPT-2
(vocab 97, n_positions 32, 2 layers, 4 heads, 32 wide) and writes it the way
the hub stores GPT-2, in five model directories under testdata/pretrained/:

  prefixed/  config.json and model.safetensors as GPT2LMHeadModel saves
             them: names with the "transformer." prefix, lm_head.weight (a
             copy of wte.weight, the tied head), and the attention buffers
             h.N.attn.bias (BOOL, the causal mask) and h.N.attn.masked_bias.
  plain/     names without the prefix, as the hub's gpt2/model.safetensors
             has them (GPT2Model), no lm_head.weight, the mask buffer as U8
             (older transformers).
  sharded/   model-00001-of-00002.safetensors, model-00002-of-00002.safetensors
             and model.safetensors.index.json (weight_map), with the prefix.
  f16/       as plain/, every weight stored as F16 (masked_bias too).
  bf16/      as plain/, every weight stored as BF16.

The Conv1D weights (attn.c_attn, attn.c_proj, mlp.c_fc, mlp.c_proj) are
stored [in, out], as Hugging Face's Conv1D holds them; data is laid out in
the safetensors library's order (by dtype size, then name), not the
header's, with "__metadata__": {"format": "pt"}.

golden.safetensors holds the references, computed by nanoGPT's model
(scripts/nanogpt.py) after loading each directory's tensors the way
nanoGPT's GPT.from_pretrained maps them (buffers dropped, Conv1D weights
transposed), with GPT-2's activation, GELU's tanh approximation:

  idx                   [2, 12] int64 input
  logits.f32            [2, 12, 97] logits of every position (prefixed,
                        plain and sharded hold the same weights)
  logits.f16, logits.bf16
                        the same for the weights rounded to F16 and BF16
  gen.prompt            [1, 5] int64
  gen.f32, gen.f16, gen.bf16
                        [1, 45] the prompt and a greedy continuation of 40
                        tokens (generate with top_k=1), which passes
                        n_positions, so the context is cropped

The script checks that its references are worth testing against: the
logits of exact GELU differ from the tanh ones by far more than the tests'
1e-4 tolerance, and every greedy step's best logit leads the second by at
least 1e-3, so that rounding cannot flip a token.

Rerunning it rewrites the model directories and the greedy tokens byte for
byte; the logits moved in their last bits between two runs (by at most
1e-6, about 1e-7 relative), far inside the tests' tolerance.
"""

import json
import math
import os
import shutil
import struct
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nanogpt import GPT, GPTConfig  # noqa: E402

torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)
torch.manual_seed(14)

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testdata", "pretrained")

VOCAB, NPOS, NLAYER, NHEAD, NEMBD = 97, 32, 2, 4, 32
CONV1D = ("attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight")

# --------------------------------------------------------------------------
# safetensors, by hand (the safetensors package is not installed)

DTYPES = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16",
          torch.bool: "BOOL", torch.uint8: "U8", torch.int64: "I64"}


def tensor_bytes(t):
    t = t.detach().contiguous().cpu()
    if t.dtype == torch.bfloat16:
        t = t.view(torch.int16)  # numpy has no bfloat16; the bits are what count
    elif t.dtype == torch.bool:
        t = t.to(torch.uint8)
    a = t.numpy()
    return a.astype(a.dtype.newbyteorder("<")).tobytes()


def save_safetensors(path, tensors):
    """Writes tensors like safetensors.torch.save_file: data sorted by
    dtype size (largest first), then by name; the header's keys sorted by
    name; format metadata."""
    order = sorted(tensors, key=lambda n: (-tensors[n].element_size(), n))
    header, blobs, off = {}, [], 0
    for name in order:
        t = tensors[name]
        b = tensor_bytes(t)
        header[name] = {"dtype": DTYPES[t.dtype], "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        off += len(b)
        blobs.append(b)
    header = {"__metadata__": {"format": "pt"}, **{k: header[k] for k in sorted(header)}}
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def load_safetensors(path):
    """Reads a safetensors file (the dtypes of DTYPES)."""
    import numpy as np
    np_dtypes = {"F32": np.float32, "F16": np.float16, "BF16": np.int16, "BOOL": np.uint8, "U8": np.uint8,
                 "I64": np.int64}
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    header.pop("__metadata__", None)
    out = {}
    for name, e in header.items():
        b, end = e["data_offsets"]
        a = np.frombuffer(data[8 + n + b:8 + n + end], dtype=np.dtype(np_dtypes[e["dtype"]]).newbyteorder("<"))
        t = torch.from_numpy(a.astype(a.dtype.newbyteorder("="))).reshape(e["shape"])
        if e["dtype"] == "BF16":
            t = t.view(torch.bfloat16)
        elif e["dtype"] == "BOOL":
            t = t.bool()
        out[name] = t
    return out


def load_dir(d):
    """Reads a model directory's tensors (one file or the index's shards)."""
    index = os.path.join(d, "model.safetensors.index.json")
    if not os.path.exists(index):
        return load_safetensors(os.path.join(d, "model.safetensors"))
    with open(index) as f:
        files = sorted(set(json.load(f)["weight_map"].values()))
    out = {}
    for fname in files:
        out.update(load_safetensors(os.path.join(d, fname)))
    return out


# --------------------------------------------------------------------------
# a random GPT-2 in the hub's layout


def hub_weights():
    """Returns the weights as GPT2Model's state dict names them (no prefix,
    no buffers), Conv1D weights [in, out]. The values are larger than
    GPT-2's initialisation so that the activation and every layer matter."""
    w = {"wte.weight": torch.randn(VOCAB, NEMBD) * 0.5, "wpe.weight": torch.randn(NPOS, NEMBD) * 0.3}
    for i in range(NLAYER):
        p = f"h.{i}."
        for ln in ("ln_1", "ln_2"):
            w[p + ln + ".weight"] = 1 + 0.2 * torch.randn(NEMBD)
            w[p + ln + ".bias"] = 0.1 * torch.randn(NEMBD)
        w[p + "attn.c_attn.weight"] = torch.randn(NEMBD, 3 * NEMBD) * 0.3
        w[p + "attn.c_attn.bias"] = torch.randn(3 * NEMBD) * 0.1
        w[p + "attn.c_proj.weight"] = torch.randn(NEMBD, NEMBD) * 0.2
        w[p + "attn.c_proj.bias"] = torch.randn(NEMBD) * 0.1
        w[p + "mlp.c_fc.weight"] = torch.randn(NEMBD, 4 * NEMBD) * 0.5
        w[p + "mlp.c_fc.bias"] = torch.randn(4 * NEMBD) * 0.3
        w[p + "mlp.c_proj.weight"] = torch.randn(4 * NEMBD, NEMBD) * 0.6
        w[p + "mlp.c_proj.bias"] = torch.randn(NEMBD) * 0.1
    w["ln_f.weight"] = 1 + 0.2 * torch.randn(NEMBD)
    w["ln_f.bias"] = 0.1 * torch.randn(NEMBD)
    return w


def buffers(mask_dtype, masked_bias_dtype):
    """The attention buffers of Hugging Face's GPT2Attention."""
    b = {}
    for i in range(NLAYER):
        b[f"h.{i}.attn.bias"] = torch.tril(torch.ones(NPOS, NPOS)).to(mask_dtype).view(1, 1, NPOS, NPOS)
        b[f"h.{i}.attn.masked_bias"] = torch.tensor(-1e4, dtype=masked_bias_dtype)
    return b


def config_json():
    return {
        "activation_function": "gelu_new",
        "architectures": ["GPT2LMHeadModel"],
        "attn_pdrop": 0.1,
        "bos_token_id": VOCAB - 1,
        "embd_pdrop": 0.1,
        "eos_token_id": VOCAB - 1,
        "initializer_range": 0.02,
        "layer_norm_epsilon": 1e-05,
        "model_type": "gpt2",
        "n_ctx": NPOS,
        "n_embd": NEMBD,
        "n_head": NHEAD,
        "n_inner": None,
        "n_layer": NLAYER,
        "n_positions": NPOS,
        "reorder_and_upcast_attn": False,
        "resid_pdrop": 0.1,
        "scale_attn_by_inverse_layer_idx": False,
        "scale_attn_weights": True,
        "summary_activation": None,
        "summary_first_dropout": 0.1,
        "summary_proj_to_labels": True,
        "summary_type": "cls_index",
        "summary_use_proj": True,
        "task_specific_params": {"text-generation": {"do_sample": True, "max_length": 50}},
        "vocab_size": VOCAB,
    }


def write_dir(name, files, index=None):
    d = os.path.join(OUT, name)
    os.makedirs(d)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(config_json(), f, indent=2, sort_keys=True)
        f.write("\n")
    for fname, tensors in files.items():
        save_safetensors(os.path.join(d, fname), tensors)
    if index is not None:
        with open(os.path.join(d, "model.safetensors.index.json"), "w") as f:
            json.dump(index, f, indent=2, sort_keys=True)
            f.write("\n")


# --------------------------------------------------------------------------
# nanoGPT's from_pretrained mapping, and the references


def from_hub(sd_hf, approximate):
    """Builds nanoGPT's model from a hub state dict as GPT.from_pretrained
    does (bias=True, block_size=n_positions, dropout 0; buffers ignored;
    Conv1D weights transposed), with the MLP's GELU as approximate says."""
    model = GPT(GPTConfig(block_size=NPOS, vocab_size=VOCAB, n_layer=NLAYER, n_head=NHEAD, n_embd=NEMBD,
                          dropout=0.0, bias=True, flash=False))
    for block in model.transformer.h:
        block.mlp.gelu = nn.GELU(approximate=approximate)
    sd = model.state_dict()
    sd_keys = [k for k in sd if not k.endswith(".attn.bias")]  # nanoGPT's own mask buffer
    hf = {}
    for k, v in sd_hf.items():
        if k.endswith(".attn.masked_bias") or k.endswith(".attn.bias"):
            continue
        hf[k if k.startswith("transformer.") or k == "lm_head.weight" else "transformer." + k] = v
    hf.setdefault("lm_head.weight", hf["transformer.wte.weight"])
    assert sorted(hf) == sorted(sd_keys), (sorted(hf), sorted(sd_keys))
    with torch.no_grad():
        for k in sd_keys:
            v = hf[k].float()
            if any(k.endswith(w) for w in CONV1D):
                assert v.shape[::-1] == sd[k].shape
                sd[k].copy_(v.t())
            else:
                assert v.shape == sd[k].shape
                sd[k].copy_(v)
    model.eval()
    return model


def greedy(model, prompt, n):
    """nanoGPT's generate with top_k=1, checking that no step is a near tie."""
    idx = prompt
    with torch.no_grad():
        for _ in range(n):
            cond = idx if idx.size(1) <= NPOS else idx[:, -NPOS:]
            logits, _ = model(cond)
            top2 = torch.topk(logits[0, -1], 2).values
            assert top2[0] - top2[1] > 1e-3, f"near tie in greedy decoding: {top2.tolist()}"
    out = model.generate(prompt, n, temperature=1.0, top_k=1)
    return out


def main():
    if os.path.exists(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    w = hub_weights()

    prefixed = {"transformer." + k: v for k, v in w.items()}
    prefixed.update({"transformer." + k: v for k, v in buffers(torch.bool, torch.float32).items()})
    prefixed["lm_head.weight"] = w["wte.weight"].clone()
    write_dir("prefixed", {"model.safetensors": prefixed})

    plain = dict(w)
    plain.update(buffers(torch.uint8, torch.float32))
    write_dir("plain", {"model.safetensors": plain})

    shards = [{}, {}]
    for k, v in w.items():
        second = k.startswith(f"h.{NLAYER - 1}.") or k.startswith("ln_f.")
        shards[int(second)]["transformer." + k] = v
    names = ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]
    total = sum(v.numel() * v.element_size() for v in w.values())
    index = {"metadata": {"total_size": total},
             "weight_map": {k: names[i] for i, s in enumerate(shards) for k in s}}
    write_dir("sharded", dict(zip(names, shards)), index)

    for tag, dt in (("f16", torch.float16), ("bf16", torch.bfloat16)):
        half = {k: v.to(dt) for k, v in w.items()}
        half.update(buffers(torch.bool, dt))
        write_dir(tag, {"model.safetensors": half})

    golden = {}
    idx = torch.randint(0, VOCAB, (2, 12))
    prompt = torch.randint(0, VOCAB, (1, 5))
    golden["idx"] = idx
    golden["gen.prompt"] = prompt
    refs = {"f32": w, "f16": {k: v.half() for k, v in w.items()}, "bf16": {k: v.bfloat16() for k, v in w.items()}}
    for tag, sd_hf in refs.items():
        model = from_hub(sd_hf, "tanh")
        with torch.no_grad():
            logits, _ = model(idx, targets=torch.zeros_like(idx))  # with targets: every position
        golden["logits." + tag] = logits
        golden["gen." + tag] = greedy(model, prompt, 40)
        exact = from_hub(sd_hf, "none")
        with torch.no_grad():
            le, _ = exact(idx, targets=torch.zeros_like(idx))
        # the Go tests' criterion: |got - want| <= 1e-4·|want| + 1e-5·max|want|
        scale = logits.abs().max()
        off = ((le - logits).abs() > 1e-4 * logits.abs() + 1e-5 * scale).float().mean().item()
        assert off > 0.25, f"{tag}: exact GELU passes the tolerance on {1 - off:.0%} of the logits"
        print(f"{tag}: logits max |x| {scale:.3f}; exact GELU's logits fail the 1e-4 tolerance on {off:.0%}; "
              f"greedy {golden['gen.' + tag][0, 5:].tolist()}")
    # read every directory back, as a loader would, and check that it gives
    # its reference
    for name, tag in (("prefixed", "f32"), ("plain", "f32"), ("sharded", "f32"), ("f16", "f16"), ("bf16", "bf16")):
        model = from_hub(load_dir(os.path.join(OUT, name)), "tanh")
        with torch.no_grad():
            logits, _ = model(idx, targets=torch.zeros_like(idx))
        assert torch.equal(logits, golden["logits." + tag]), name
    save_safetensors(os.path.join(OUT, "golden.safetensors"), golden)
    size = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(OUT) for f in fs)
    print(f"wrote {OUT}: {size} bytes")


if __name__ == "__main__":
    main()
