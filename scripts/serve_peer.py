#!/usr/bin/python3
"""serve_peer.py: the PyTorch peer of cmd/serve for scripts/bench_serve.sh.

    /usr/bin/python3 scripts/serve_peer.py --kind=gpt2|qwen3|recipe --port=PORT [--threads=N]

A small OpenAI-style server (the standard library's ThreadingHTTPServer,
one thread per connection) answering POST /v1/completions (prompt as text
or a list of token ids, max_tokens, temperature with 0 = greedy, seed,
stream with server-sent events ending in "data: [DONE]",
stream_options.include_usage) and GET /health. Each request is generated
on its own, batch 1, with a KV cache (past keys and values, as Hugging
Face's generate keeps them), under torch.no_grad, from one model shared by
every thread. The models are transcribed here from GPT-2's and Qwen3's
definitions, with random weights at the shapes that
`benchserve model -kind=K` writes for Wick (speed does not depend on the
values). There is no tokenizer: a text prompt becomes its bytes (mod the
vocabulary), and each generated token streams as the text " ID".
"""
import argparse
import json
import math
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import torch
import torch.nn.functional as F

SHAPES = {
    # vocab, context, layers, heads, width; GPT-2 blocks with biases
    "gpt2": dict(arch="gpt2", vocab=50257, ctx=1024, layers=12, heads=12, dim=768),
    "recipe": dict(arch="gpt2", vocab=65, ctx=64, layers=4, heads=4, dim=128),
    # Qwen3: RMSNorm, RoPE, grouped KV heads, q/k norms, SwiGLU, tied head
    "qwen3": dict(arch="qwen3", vocab=151936, ctx=2048, layers=4, heads=4, kv_heads=2, head_dim=64,
                  dim=256, ffn=768, theta=1e6, eps=1e-6),
}


def randn(*shape):
    return torch.randn(*shape) * 0.02


class GPT2:
    def __init__(self, s):
        self.s, d = s, s["dim"]
        self.wte, self.wpe = randn(s["vocab"], d), randn(s["ctx"], d)
        self.blocks = [dict(ln1=(torch.ones(d), torch.zeros(d)), attn_w=randn(3 * d, d), attn_b=torch.zeros(3 * d),
                            proj_w=randn(d, d), proj_b=torch.zeros(d), ln2=(torch.ones(d), torch.zeros(d)),
                            fc_w=randn(4 * d, d), fc_b=torch.zeros(4 * d), fc2_w=randn(d, 4 * d),
                            fc2_b=torch.zeros(d)) for _ in range(s["layers"])]
        self.lnf = (torch.ones(d), torch.zeros(d))

    def forward(self, ids, pos, cache):
        """ids: (T,) new tokens at positions pos..; cache: per-layer [k, v] (H, t, hd) or None."""
        s, d, h = self.s, self.s["dim"], self.s["heads"]
        T = ids.shape[0]
        x = self.wte[ids] + self.wpe[pos:pos + T]
        for i, b in enumerate(self.blocks):
            y = F.layer_norm(x, (d,), *b["ln1"])
            q, k, v = F.linear(y, b["attn_w"], b["attn_b"]).split(d, dim=-1)
            q, k, v = (t.view(T, h, d // h).transpose(0, 1) for t in (q, k, v))
            if cache[i] is not None:
                k, v = torch.cat([cache[i][0], k], 1), torch.cat([cache[i][1], v], 1)
            cache[i] = (k, v)
            y = attend(q, k, v, pos).transpose(0, 1).reshape(T, d)
            x = x + F.linear(y, b["proj_w"], b["proj_b"])
            y = F.layer_norm(x, (d,), *b["ln2"])
            x = x + F.linear(F.gelu(F.linear(y, b["fc_w"], b["fc_b"]), approximate="tanh"), b["fc2_w"], b["fc2_b"])
        x = F.layer_norm(x[-1:], (d,), *self.lnf)
        return F.linear(x, self.wte)[0]  # tied head, the last position's logits


class Qwen3:
    def __init__(self, s):
        self.s, d, hd = s, s["dim"], s["head_dim"]
        h, kvh, f = s["heads"], s["kv_heads"], s["ffn"]
        self.emb = randn(s["vocab"], d)
        self.blocks = [dict(n1=torch.ones(d), q=randn(h * hd, d), k=randn(kvh * hd, d), v=randn(kvh * hd, d),
                            o=randn(d, h * hd), qn=torch.ones(hd), kn=torch.ones(hd), n2=torch.ones(d),
                            gate=randn(f, d), up=randn(f, d), down=randn(d, f)) for _ in range(s["layers"])]
        self.norm = torch.ones(d)
        inv = 1.0 / (s["theta"] ** (torch.arange(0, hd, 2).float() / hd))
        ang = torch.outer(torch.arange(s["ctx"]).float(), inv)
        self.cos, self.sin = torch.cat([ang.cos()] * 2, -1), torch.cat([ang.sin()] * 2, -1)

    def rms(self, x, w):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.s["eps"]) * w

    def rope(self, x, pos):
        T, half = x.shape[1], x.shape[-1] // 2
        cos, sin = self.cos[pos:pos + T], self.sin[pos:pos + T]
        rot = torch.cat([-x[..., half:], x[..., :half]], -1)
        return x * cos + rot * sin

    def forward(self, ids, pos, cache):
        s, hd, h, kvh = self.s, self.s["head_dim"], self.s["heads"], self.s["kv_heads"]
        T = ids.shape[0]
        x = self.emb[ids]
        for i, b in enumerate(self.blocks):
            y = self.rms(x, b["n1"])
            q = self.rms(F.linear(y, b["q"]).view(T, h, hd), b["qn"]).transpose(0, 1)
            k = self.rms(F.linear(y, b["k"]).view(T, kvh, hd), b["kn"]).transpose(0, 1)
            v = F.linear(y, b["v"]).view(T, kvh, hd).transpose(0, 1)
            q, k = self.rope(q, pos), self.rope(k, pos)
            if cache[i] is not None:
                k, v = torch.cat([cache[i][0], k], 1), torch.cat([cache[i][1], v], 1)
            cache[i] = (k, v)
            rep = h // kvh
            y = attend(q, k.repeat_interleave(rep, 0), v.repeat_interleave(rep, 0), pos)
            x = x + F.linear(y.transpose(0, 1).reshape(T, h * hd), b["o"])
            y = self.rms(x, b["n2"])
            x = x + F.linear(F.silu(F.linear(y, b["gate"])) * F.linear(y, b["up"]), b["down"])
        return F.linear(self.rms(x[-1:], self.norm), self.emb)[0]


def attend(q, k, v, pos):
    """Causal attention of q (H, T, hd) at positions pos.. over k, v (H, pos+T, hd)."""
    T, S = q.shape[1], k.shape[1]
    att = (q @ k.transpose(1, 2)) / math.sqrt(q.shape[-1])
    if T > 1:
        mask = torch.ones(T, S, dtype=torch.bool).tril(S - T)
        att = att.masked_fill(~mask, float("-inf"))
    return att.softmax(-1) @ v


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    model = None

    def log_message(self, *args):
        pass

    def send(self, code, obj):
        b = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)

    def do_GET(self):
        if self.path == "/health":
            return self.send(200, {"status": "ok"})
        self.send(404, {"error": {"message": "not found", "type": "invalid_request_error"}})

    def do_POST(self):
        n = int(self.headers.get("Content-Length", 0))
        try:
            req = json.loads(self.rfile.read(n))
        except ValueError:
            return self.send(400, {"error": {"message": "bad JSON", "type": "invalid_request_error"}})
        if self.path != "/v1/completions":
            return self.send(404, {"error": {"message": "not found", "type": "invalid_request_error"}})
        m, s = self.model, self.model.s
        p = req.get("prompt", "")
        ids = [int(t) % s["vocab"] for t in p] if isinstance(p, list) else [b % s["vocab"] for b in p.encode()]
        max_tokens = int(req.get("max_tokens", 16))
        if not ids or len(ids) + max_tokens > s["ctx"]:
            return self.send(400, {"error": {"message": "prompt + max_tokens exceed the context", "type": "invalid_request_error"}})
        temp = float(req.get("temperature", 1.0))
        gen = torch.Generator().manual_seed(int(req.get("seed", 0)))
        stream = bool(req.get("stream", False))
        usage = bool((req.get("stream_options") or {}).get("include_usage"))
        rid, created = "cmpl-%d" % id(self), int(time.time())
        if stream:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True

        def event(obj):
            self.wfile.write(b"data: " + json.dumps(obj).encode() + b"\n\n")
            self.wfile.flush()

        out, cache, pos, x = [], [None] * s["layers"], 0, torch.tensor(ids)
        try:
            with torch.no_grad():
                for _ in range(max_tokens):
                    logits = m.forward(x, pos, cache)
                    pos += x.shape[0]
                    if temp == 0:
                        t = int(logits.argmax())
                    else:
                        t = int(torch.multinomial((logits / temp).softmax(-1), 1, generator=gen))
                    out.append(t)
                    x = torch.tensor([t])
                    if stream:
                        event({"id": rid, "object": "text_completion", "created": created, "model": req.get("model", "peer"),
                               "choices": [{"index": 0, "text": " %d" % t, "logprobs": None, "finish_reason": None}]})
            u = {"prompt_tokens": len(ids), "completion_tokens": len(out), "total_tokens": len(ids) + len(out)}
            if not stream:
                return self.send(200, {"id": rid, "object": "text_completion", "created": created, "model": req.get("model", "peer"),
                                       "choices": [{"index": 0, "text": "".join(" %d" % t for t in out), "logprobs": None,
                                                    "finish_reason": "length"}], "usage": u})
            event({"id": rid, "object": "text_completion", "created": created, "model": req.get("model", "peer"),
                   "choices": [{"index": 0, "text": "", "logprobs": None, "finish_reason": "length"}]})
            if usage:
                event({"id": rid, "object": "text_completion", "created": created, "model": req.get("model", "peer"),
                       "choices": [], "usage": u})
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client hung up: stop generating


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kind", default="gpt2", choices=sorted(SHAPES))
    ap.add_argument("--port", type=int, default=8081)
    ap.add_argument("--threads", type=int, default=1, help="torch.set_num_threads")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    s = SHAPES[a.kind]
    Handler.model = GPT2(s) if s["arch"] == "gpt2" else Qwen3(s)
    srv = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    srv.daemon_threads = True
    srv.serve_forever()


if __name__ == "__main__":
    main()
