#!/usr/bin/python3
"""Writes testdata/autocast/gradscaler.json: torch.cuda.amp.GradScaler's loss
scaling over scripted sequences of overflowing gradients, for
optim/gradscaler_test.go.

Run with Debian's python3-torch 1.13: /usr/bin/python3 scripts/gen_golden_autocast_gradscaler.py

torch 1.13 runs GradScaler on CUDA only: without a GPU the class disables
itself, and its two kernels, torch._amp_foreach_non_finite_check_and_unscale_
and torch._amp_update_scale_, have no CPU implementation. So this script
transcribes them (unscale and update below, from aten/src/ATen/native/cuda/
AmpKernels.cu) and drives them the way GradScaler's Python methods do
(torch/cuda/amp/grad_scaler.py: scale multiplies the loss by the float32
scale; unscale_ multiplies every gradient by
self._scale.double().reciprocal().float() and records an inf/NaN; step
skips optimizer.step() when one was found; update calls
_amp_update_scale_), on float32 CPU tensors.

Each case trains a parameter of three elements with SGD(lr=0.1): at step i
the true gradient is g·(i+1)/7 for a fixed g, the scaled one is that times
the scale (as Backward of the scaled loss would give), an element of it is
made ±inf or NaN at the scripted steps, then unscale_, clip_grad_norm_ to
1.0, step and update. Recorded: every step where the scale changed (step,
new scale), the skipped steps, the final scale, growth tracker and
parameter.
"""

import json
import os

import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testdata", "autocast")


def unscale(grads, found_inf, inv_scale):
    """_amp_foreach_non_finite_check_and_unscale_: per element, found_inf = 1
    if it is not finite; val * inv_scale unless inv_scale == 1."""
    for g in grads:
        if not bool(torch.isfinite(g).all()):
            found_inf.fill_(1.0)
        if float(inv_scale) != 1.0:
            g.mul_(inv_scale)


def update(scale, tracker, found_inf, growth_factor, backoff_factor, growth_interval):
    """_amp_update_scale_, in float32 and int32 as the kernel computes."""
    if float(found_inf) != 0:
        scale.mul_(torch.tensor(backoff_factor, dtype=torch.float32))
        tracker.fill_(0)
        return
    successful = int(tracker) + 1
    if successful == growth_interval:
        new = scale * torch.tensor(growth_factor, dtype=torch.float32)
        if bool(torch.isfinite(new).all()):
            scale.copy_(new)
        tracker.fill_(0)
    else:
        tracker.fill_(successful)


def run(name, steps, bad, init_scale=65536.0, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
    p = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    opt = torch.optim.SGD([p], lr=0.1)
    g0 = torch.tensor([0.3, -1.7, 0.9])
    scale = torch.full((1,), init_scale, dtype=torch.float32)
    tracker = torch.full((1,), 0, dtype=torch.int32)
    changes, skipped = [], []
    for i in range(steps):
        # scaler.scale(loss).backward(): the gradient of the scaled loss
        g = (g0 * (i + 1) / 7) * scale
        if i in bad:
            g[i % 3] = {"inf": float("inf"), "-inf": float("-inf"), "nan": float("nan")}[bad[i]]
        p.grad = g.clone()
        # scaler.unscale_(opt)
        inv_scale = scale.double().reciprocal().float()
        found_inf = torch.full((1,), 0.0, dtype=torch.float32)
        unscale([p.grad], found_inf, inv_scale)
        torch.nn.utils.clip_grad_norm_([p], 1.0)
        # scaler.step(opt)
        if float(found_inf) == 0:
            opt.step()
        else:
            skipped.append(i)
        # scaler.update()
        before = float(scale)
        update(scale, tracker, found_inf, growth_factor, backoff_factor, growth_interval)
        if float(scale) != before:
            changes.append([i, float(scale)])
        opt.zero_grad(set_to_none=True)
    return {"name": name, "steps": steps, "bad": {str(k): v for k, v in sorted(bad.items())},
            "init_scale": init_scale, "growth_factor": growth_factor, "backoff_factor": backoff_factor,
            "growth_interval": growth_interval, "changes": changes, "skipped": skipped,
            "final_scale": float(scale), "final_tracker": int(tracker), "final_param": p.detach().tolist()}


def main():
    os.makedirs(OUT, exist_ok=True)
    cases = [
        # PyTorch's defaults: overflows first (the scale halves each
        # time), 2000 clean steps (it doubles), overflows in the middle of
        # a growth interval (the count starts again), NaN and -inf too
        run("defaults", 4300, {0: "inf", 1: "inf", 2: "nan", 10: "-inf", 2011: "inf", 2012: "inf", 2500: "nan", 4100: "inf"}),
        # a short interval with an odd backoff
        run("short", 40, {3: "inf", 4: "nan", 9: "inf", 20: "-inf", 21: "inf", 22: "inf"},
            init_scale=1024.0, growth_factor=3.0, backoff_factor=0.25, growth_interval=4),
        # growth that would overflow float32 keeps the scale
        run("ceiling", 12, {5: "inf"}, init_scale=2.0 ** 125, growth_factor=4.0, growth_interval=2),
        # growth every step
        run("every", 10, {6: "nan"}, init_scale=1.0, growth_factor=2.0, growth_interval=1),
    ]
    with open(os.path.join(OUT, "gradscaler.json"), "w") as f:
        json.dump(cases, f, indent=1)
        f.write("\n")
    for c in cases:
        print(c["name"], "changes", len(c["changes"]), "skipped", c["skipped"], "final", c["final_scale"], c["final_tracker"])


if __name__ == "__main__":
    main()
