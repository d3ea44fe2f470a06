#!/usr/bin/python3
"""Writes a random Llama at SmolLM2-135M's shapes in Hugging Face's hub
layout (config.json, model.safetensors) for timing and measuring loads:

    /usr/bin/python3 scripts/gen_load_model.py DIR [--dtype F32|BF16] [--model smollm2-135m|gpt2]

hidden 576, 30 layers, 9 heads, 3 key/value heads, intermediate 1536, vocab
49152, tied embeddings (no lm_head.weight), weights N(0, 0.02), norms one.
With --model gpt2 a GPT-2 124M instead (12 layers, 12 heads, 768 wide,
vocab 50257, 1024 positions, tied; the Conv1D weights stored [in, out] as
Hugging Face's GPT2Model stores them; biases zero, layer norms one).
numpy only; the safetensors file is written by hand (an 8-byte header
length, the JSON header, the tensors' bytes in order). BF16 keeps the top
16 bits of each float32 (truncation: the values only need to be plausible).
It prints the tensors' bytes.
"""
import argparse
import json
import os

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--dtype", choices=["F32", "BF16"], default="F32")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--model", choices=["smollm2-135m", "gpt2"], default="smollm2-135m")
    a = ap.parse_args()
    if a.model == "gpt2":
        E, L, V, P = 768, 12, 50257, 1024
        shapes = [("wte.weight", (V, E)), ("wpe.weight", (P, E))]
        for i in range(L):
            p = "h.%d." % i
            shapes += [(p + "ln_1.weight", (E,)), (p + "ln_1.bias", (E,)),
                       (p + "attn.c_attn.weight", (E, 3 * E)), (p + "attn.c_attn.bias", (3 * E,)),
                       (p + "attn.c_proj.weight", (E, E)), (p + "attn.c_proj.bias", (E,)),
                       (p + "ln_2.weight", (E,)), (p + "ln_2.bias", (E,)),
                       (p + "mlp.c_fc.weight", (E, 4 * E)), (p + "mlp.c_fc.bias", (4 * E,)),
                       (p + "mlp.c_proj.weight", (4 * E, E)), (p + "mlp.c_proj.bias", (E,))]
        shapes += [("ln_f.weight", (E,)), ("ln_f.bias", (E,))]
        cfg = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "vocab_size": V, "n_positions": P,
               "n_embd": E, "n_layer": L, "n_head": 12, "layer_norm_epsilon": 1e-5,
               "activation_function": "gelu_new", "torch_dtype": "bfloat16" if a.dtype == "BF16" else "float32"}
        write(a, shapes, cfg)
        return
    H, L, NH, KV, I, V = 576, 30, 9, 3, 1536, 49152
    hd = H // NH
    shapes = [("model.embed_tokens.weight", (V, H))]
    for i in range(L):
        p = "model.layers.%d." % i
        shapes += [(p + "input_layernorm.weight", (H,)), (p + "self_attn.q_proj.weight", (NH * hd, H)),
                   (p + "self_attn.k_proj.weight", (KV * hd, H)), (p + "self_attn.v_proj.weight", (KV * hd, H)),
                   (p + "self_attn.o_proj.weight", (H, NH * hd)), (p + "post_attention_layernorm.weight", (H,)),
                   (p + "mlp.gate_proj.weight", (I, H)), (p + "mlp.up_proj.weight", (I, H)),
                   (p + "mlp.down_proj.weight", (H, I))]
    shapes.append(("model.norm.weight", (H,)))
    cfg = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": V, "hidden_size": H,
           "intermediate_size": I, "num_hidden_layers": L, "num_attention_heads": NH, "num_key_value_heads": KV,
           "head_dim": hd, "max_position_embeddings": 2048, "rms_norm_eps": 1e-5, "rope_theta": 100000.0,
           "hidden_act": "silu", "tie_word_embeddings": True, "bos_token_id": 0, "eos_token_id": 0,
           "torch_dtype": "bfloat16" if a.dtype == "BF16" else "float32"}
    write(a, shapes, cfg)


def write(a, shapes, cfg):
    """Writes model.safetensors of shapes (random but norms and biases) and config.json cfg."""
    os.makedirs(a.dir, exist_ok=True)
    size = 2 if a.dtype == "BF16" else 4
    header, off = {}, 0
    for name, shape in shapes:
        n = int(np.prod(shape)) * size
        header[name] = {"dtype": a.dtype, "shape": list(shape), "data_offsets": [off, off + n]}
        off += n
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    rng = np.random.default_rng(a.seed)
    with open(os.path.join(a.dir, "model.safetensors"), "wb") as f:
        f.write(np.uint64(len(h)).tobytes())
        f.write(h)
        for name, shape in shapes:
            if name.endswith("norm.weight") or name.startswith("ln_") or ".ln_" in name:
                w = np.ones(shape, np.float32) if name.endswith("weight") else np.zeros(shape, np.float32)
            elif name.endswith(".bias"):
                w = np.zeros(shape, np.float32)
            else:
                w = (rng.standard_normal(shape, dtype=np.float32) * 0.02).astype(np.float32)
            if a.dtype == "BF16":
                f.write((w.view(np.uint32) >> 16).astype(np.uint16).tobytes())
            else:
                f.write(w.tobytes())
    with open(os.path.join(a.dir, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    print("tensor bytes=%d" % off)


if __name__ == "__main__":
    main()
