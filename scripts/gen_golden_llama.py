#!/usr/bin/python3
"""Generate the Llama-family goldens of nn.LoadCausalLM from PyTorch.

Run with the system Python, which has PyTorch 1.13 (Debian's python3-torch):

    /usr/bin/python3 scripts/gen_golden_llama.py

transformers cannot be installed here, so this script holds its own
transcription of the math of transformers' modeling_llama.py,
modeling_qwen2.py, modeling_qwen3.py and modeling_rope_utils.py (RMSNorm in
float32 with the weight applied after the cast back, rotary embeddings with
rotate_half and cos/sin computed in float32, the default, linear and llama3
frequency rules, repeat_kv for grouped key/value heads, eager attention with
an additive causal mask and a float32 softmax, the SiLU-gated MLP). It
builds small random models in the hub's layout, one directory each under
testdata/llama/:

  llama_gqa/        llama, 4 heads over 2 key/value heads, tied head, F32,
                    default rope, eos_token_id an int.
  llama3_mqa_bf16/  llama, multi-query (1 key/value head), untied head, BF16
                    file, llama3 rope scaling, eos_token_id a list.
  llama_linear_f16_sharded/
                    llama, multi-head (4 of 4), attention_bias and mlp_bias,
                    linear rope scaling in the old {"type": ...} spelling,
                    F16 weights in two shards with model.safetensors.index.json.
  qwen2/            qwen2: q/k/v biases (no o_proj bias), GQA, tied head,
                    use_sliding_window false.
  qwen3/            qwen3: q_norm and k_norm, head_dim 16 while
                    hidden_size/num_attention_heads is 8, untied head.
  mistral/          mistral with sliding_window null (Mistral 7B v0.2 and
                    later): Llama's math, untied head, GQA.

Each directory holds config.json, the weights, and golden.safetensors with
the references, computed in float32 from the weights as stored (BF16 and
F16 values widened to float32, as Wick loads them):

  idx       [2, 8] int64 input
  logits    [2, 8, vocab] logits of every position
  targets   [2, 8] int64 next tokens, one of them -1 (ignored)
  loss      [] mean cross-entropy of logits against targets
  grad.NAME the gradient of loss with respect to parameter NAME
  prompt    [1, 5] int64 prompt for greedy decoding
  greedy    [1, 17] the prompt and 12 tokens chosen by argmax, each step
            recomputing the whole context (the prompt is chosen so that
            every step's best logit leads the second by at least 1e-3)
"""

import json
import math
import os
import struct

import torch
import torch.nn.functional as F

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testdata", "llama")

DTYPES = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16", torch.int64: "I64"}


def tensor_bytes(t):
    t = t.contiguous()
    if t.dtype in (torch.float16, torch.bfloat16):
        return t.view(torch.int16).numpy().tobytes()
    return t.numpy().tobytes()


def write_safetensors(path, tensors, metadata=None):
    """Writes the safetensors format: 8-byte header length, JSON header
    padded with spaces to 8 bytes, then each tensor's little-endian data."""
    header, blobs, off = {}, [], 0
    if metadata:
        header["__metadata__"] = metadata
    for name in sorted(tensors):
        t = tensors[name]
        b = tensor_bytes(t)
        header[name] = {"dtype": DTYPES[t.dtype], "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


# ---- the transcription of transformers' math ----

def rms_norm(x, weight, eps):
    dtype = x.dtype
    h = x.to(torch.float32)
    var = h.pow(2).mean(-1, keepdim=True)
    h = h * torch.rsqrt(var + eps)
    return weight * h.to(dtype)


def rope_inv_freq(cfg, head_dim):
    base = cfg["rope_theta"]
    inv = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.int64).float() / head_dim))
    rs = cfg.get("rope_scaling") or {}
    kind = rs.get("rope_type", rs.get("type", "default"))
    if kind == "linear":
        inv = inv / rs["factor"]
    elif kind == "llama3":
        factor = rs["factor"]
        low, high = rs["low_freq_factor"], rs["high_freq_factor"]
        old = rs["original_max_position_embeddings"]
        low_wavelen, high_wavelen = old / low, old / high
        wavelen = 2 * math.pi / inv
        scaled = torch.where(wavelen > low_wavelen, inv / factor, inv)
        smooth = (old / wavelen - low) / (high - low)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
        medium = ~(wavelen < high_wavelen) * ~(wavelen > low_wavelen)
        inv = torch.where(medium, smoothed, scaled)
    elif kind != "default":
        raise ValueError(kind)
    return inv


def rope_cos_sin(inv, t):
    pos = torch.arange(t)[None, :].float()  # [1, T]
    freqs = (inv[None, :, None].float() @ pos[:, None, :]).transpose(1, 2)  # [1, T, D/2]
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos()[0], emb.sin()[0]


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def repeat_kv(x, n):
    if n == 1:
        return x
    b, h, s, d = x.shape
    return x[:, :, None, :, :].expand(b, h, n, s, d).reshape(b, h * n, s, d)


def linear(x, p, name):
    return F.linear(x, p[name + ".weight"], p.get(name + ".bias"))


def forward(cfg, p, idx):
    hd = head_dim(cfg)
    nh, nkv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    eps = cfg["rms_norm_eps"]
    b, t = idx.shape
    cos, sin = rope_cos_sin(rope_inv_freq(cfg, hd), t)
    x = F.embedding(idx, p["model.embed_tokens.weight"])
    mask = torch.full((t, t), torch.finfo(torch.float32).min).triu(1)
    for i in range(cfg["num_hidden_layers"]):
        pre = "model.layers.%d." % i
        h = rms_norm(x, p[pre + "input_layernorm.weight"], eps)
        q = linear(h, p, pre + "self_attn.q_proj").view(b, t, nh, hd)
        k = linear(h, p, pre + "self_attn.k_proj").view(b, t, nkv, hd)
        v = linear(h, p, pre + "self_attn.v_proj").view(b, t, nkv, hd)
        if cfg["model_type"] == "qwen3":
            q = rms_norm(q, p[pre + "self_attn.q_norm.weight"], eps)
            k = rms_norm(k, p[pre + "self_attn.k_norm.weight"], eps)
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k, v = repeat_kv(k, nh // nkv), repeat_kv(v, nh // nkv)
        w = torch.matmul(q, k.transpose(2, 3)) * hd ** -0.5 + mask
        w = F.softmax(w, dim=-1, dtype=torch.float32).to(q.dtype)
        o = torch.matmul(w, v).transpose(1, 2).reshape(b, t, nh * hd)
        x = x + linear(o, p, pre + "self_attn.o_proj")
        h = rms_norm(x, p[pre + "post_attention_layernorm.weight"], eps)
        gate = F.silu(linear(h, p, pre + "mlp.gate_proj"))
        x = x + linear(gate * linear(h, p, pre + "mlp.up_proj"), p, pre + "mlp.down_proj")
    x = rms_norm(x, p["model.norm.weight"], eps)
    head = p["model.embed_tokens.weight"] if cfg["tie_word_embeddings"] else p["lm_head.weight"]
    return F.linear(x, head)


def head_dim(cfg):
    return cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]


# ---- the models ----

def make_params(cfg, gen):
    hd, h, inter = head_dim(cfg), cfg["hidden_size"], cfg["intermediate_size"]
    nh, nkv, v = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["vocab_size"]
    typ = cfg["model_type"]
    qkv_bias = typ == "qwen2" or cfg.get("attention_bias", False)
    o_bias = typ != "qwen2" and cfg.get("attention_bias", False)
    mlp_bias = cfg.get("mlp_bias", False)

    def randn(*shape, std=1.0):
        return torch.randn(*shape, generator=gen) * std

    p = {"model.embed_tokens.weight": randn(v, h, std=0.3)}

    def lin(name, i, o, bias):
        p[name + ".weight"] = randn(o, i, std=1 / math.sqrt(i))
        if bias:
            p[name + ".bias"] = randn(o, std=0.1)

    def norm(name, n):
        p[name + ".weight"] = 1 + randn(n, std=0.1)

    for i in range(cfg["num_hidden_layers"]):
        pre = "model.layers.%d." % i
        lin(pre + "self_attn.q_proj", h, nh * hd, qkv_bias)
        lin(pre + "self_attn.k_proj", h, nkv * hd, qkv_bias)
        lin(pre + "self_attn.v_proj", h, nkv * hd, qkv_bias)
        lin(pre + "self_attn.o_proj", nh * hd, h, o_bias)
        if typ == "qwen3":
            norm(pre + "self_attn.q_norm", hd)
            norm(pre + "self_attn.k_norm", hd)
        lin(pre + "mlp.gate_proj", h, inter, mlp_bias)
        lin(pre + "mlp.up_proj", h, inter, mlp_bias)
        lin(pre + "mlp.down_proj", inter, h, mlp_bias)
        norm(pre + "input_layernorm", h)
        norm(pre + "post_attention_layernorm", h)
    norm("model.norm", h)
    if not cfg["tie_word_embeddings"]:
        lin("lm_head", h, v, False)
    return p


def base_config(model_type, arch, **kw):
    cfg = {
        "architectures": [arch],
        "model_type": model_type,
        "vocab_size": 96,
        "hidden_size": 32,
        "intermediate_size": 48,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "max_position_embeddings": 64,
        "rms_norm_eps": 1e-6,
        "rope_theta": 10000.0,
        "rope_scaling": None,
        "hidden_act": "silu",
        "tie_word_embeddings": True,
        "bos_token_id": 1,
        "eos_token_id": 2,
        "torch_dtype": "float32",
        "initializer_range": 0.02,
        "attention_dropout": 0.0,
    }
    cfg.update(kw)
    return cfg


VARIANTS = [
    ("llama_gqa", base_config("llama", "LlamaForCausalLM", attention_bias=False, mlp_bias=False), torch.float32, 1),
    ("llama3_mqa_bf16", base_config(
        "llama", "LlamaForCausalLM", num_key_value_heads=1, tie_word_embeddings=False, rope_theta=500000.0,
        rope_scaling={"rope_type": "llama3", "factor": 4.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                      "original_max_position_embeddings": 16},
        eos_token_id=[2, 5], torch_dtype="bfloat16", attention_bias=False, mlp_bias=False, head_dim=8), torch.bfloat16, 1),
    ("llama_linear_f16_sharded", base_config(
        "llama", "LlamaForCausalLM", num_key_value_heads=4, tie_word_embeddings=False,
        rope_scaling={"type": "linear", "factor": 2.0}, attention_bias=True, mlp_bias=True,
        torch_dtype="float16"), torch.float16, 2),
    ("qwen2", base_config(
        "qwen2", "Qwen2ForCausalLM", rope_theta=1000000.0, use_sliding_window=False, sliding_window=4096,
        max_window_layers=2, eos_token_id=3, bos_token_id=None), torch.float32, 1),
    ("qwen3", base_config(
        "qwen3", "Qwen3ForCausalLM", head_dim=16, tie_word_embeddings=False, rope_theta=1000000.0,
        attention_bias=False, use_sliding_window=False, sliding_window=None, rms_norm_eps=1e-6,
        eos_token_id=4), torch.float32, 1),
    ("mistral", base_config(
        "mistral", "MistralForCausalLM", sliding_window=None, tie_word_embeddings=False, rope_theta=1000000.0,
        eos_token_id=2), torch.float32, 1),
]


def greedy(cfg, p, prompt, n):
    idx, margin = prompt.clone(), float("inf")
    for _ in range(n):
        last = forward(cfg, p, idx)[:, -1, :]
        top = last.topk(2, dim=-1).values
        margin = min(margin, float((top[:, 0] - top[:, 1]).min()))
        idx = torch.cat([idx, last.argmax(-1, keepdim=True)], dim=1)
    return idx, margin


def main():
    for name, cfg, dtype, shards in VARIANTS:
        gen = torch.Generator().manual_seed(sum(map(ord, name)))
        stored = {k: v.to(dtype) for k, v in make_params(cfg, gen).items()}
        d = os.path.join(ROOT, name)
        os.makedirs(d, exist_ok=True)
        for f in os.listdir(d):
            os.remove(os.path.join(d, f))
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(cfg, f, indent=2)
            f.write("\n")
        if shards == 1:
            write_safetensors(os.path.join(d, "model.safetensors"), stored, {"format": "pt"})
        else:
            names = sorted(stored)
            half = len(names) // 2
            weight_map = {}
            for s, part in enumerate([names[:half], names[half:]]):
                fname = "model-%05d-of-%05d.safetensors" % (s + 1, shards)
                write_safetensors(os.path.join(d, fname), {k: stored[k] for k in part}, {"format": "pt"})
                weight_map.update({k: fname for k in part})
            total = sum(t.numel() * t.element_size() for t in stored.values())
            with open(os.path.join(d, "model.safetensors.index.json"), "w") as f:
                json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2, sort_keys=True)
                f.write("\n")

        p = {k: v.float().requires_grad_() for k, v in stored.items()}
        v = cfg["vocab_size"]
        idx = torch.randint(0, v, (2, 9), generator=gen)
        x, targets = idx[:, :8].contiguous(), idx[:, 1:].clone()
        targets[1, 3] = -1
        logits = forward(cfg, p, x)
        loss = F.cross_entropy(logits.reshape(-1, v), targets.reshape(-1), ignore_index=-1)
        loss.backward()
        golden = {"idx": x, "logits": logits.detach(), "targets": targets, "loss": loss.detach()}
        for k, t in p.items():
            golden["grad." + k] = t.grad
        with torch.no_grad():
            for seed in range(100):
                pg = torch.Generator().manual_seed(seed)
                prompt = torch.randint(0, v, (1, 5), generator=pg)
                out, margin = greedy(cfg, p, prompt, 12)
                if margin >= 1e-3:
                    break
            else:
                raise SystemExit(name + ": no prompt with clear greedy choices")
        golden["prompt"], golden["greedy"] = prompt, out
        write_safetensors(os.path.join(d, "golden.safetensors"), golden)
        print("%s: loss %.6f, greedy %s (margin %.4f)" % (name, loss.item(), out[0, 5:].tolist(), margin))


if __name__ == "__main__":
    main()
