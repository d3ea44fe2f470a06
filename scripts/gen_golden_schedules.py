#!/usr/bin/python3
"""Generate golden learning rates for Wick's optim schedules from PyTorch.

Run with the system Python, which has PyTorch 1.13 (Debian's python3-torch):

    /usr/bin/python3 scripts/gen_golden_schedules.py

It writes testdata/nn/schedules.json: a list of cases, each with the
schedule's name (the Go test builds the same schedule from it), the
learning rate after construction and after each of "steps" calls to
scheduler.step() ("lrs": lrs[k] is the rate of step k), and the rates of a
run that saved the optimizer's and the scheduler's state_dict after
"resume_at" steps, built a new optimizer and scheduler, loaded both and
stepped on ("resumed": the rates of steps resume_at..steps).
"""

import json
import math
import os

import torch
from torch.optim import lr_scheduler as S

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testdata", "nn", "schedules.json")
LR = 0.1


def nanogpt_get_lr(it, learning_rate=LR, min_lr=0.01, warmup_iters=4, lr_decay_iters=16):
    """nanoGPT's train.py get_lr."""
    if it < warmup_iters:
        return learning_rate * (it + 1) / (warmup_iters + 1)
    if it > lr_decay_iters:
        return min_lr
    decay_ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
    return min_lr + coeff * (learning_rate - min_lr)


# name -> (constructor of the scheduler over an optimizer, steps)
CASES = {
    "constant": (lambda o: S.LambdaLR(o, lambda s: 1.0), 8),
    "linear_warmup": (lambda o: S.LinearLR(o, start_factor=0.1, end_factor=1.0, total_iters=5), 10),
    "linear_decay": (lambda o: S.LinearLR(o, start_factor=1.0, end_factor=0.0, total_iters=8), 12),
    "step": (lambda o: S.StepLR(o, step_size=3, gamma=0.5), 12),
    "cosine": (lambda o: S.CosineAnnealingLR(o, T_max=10, eta_min=0.01), 10),
    "lambda": (lambda o: S.LambdaLR(o, lambda s: 0.9 ** s), 10),
    "nanogpt_cosine": (lambda o: S.LambdaLR(o, lambda s: nanogpt_get_lr(s) / LR), 20),
    "warmup_cosine": (lambda o: S.SequentialLR(o, [S.LinearLR(o, start_factor=0.01, end_factor=1.0, total_iters=5),
                                                  S.CosineAnnealingLR(o, T_max=15, eta_min=1e-4)], milestones=[5]), 20),
    "warmup_constant_step": (lambda o: S.SequentialLR(o, [S.LinearLR(o, start_factor=0.25, end_factor=1.0, total_iters=3),
                                                         S.LambdaLR(o, lambda s: 1.0),
                                                         S.StepLR(o, step_size=2, gamma=0.1)], milestones=[3, 6]), 12),
}


def new(make):
    p = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([p], lr=LR)
    return opt, make(opt)


def lr_of(opt):
    return opt.param_groups[0]["lr"]


def main():
    cases = []
    for name, (make, steps) in CASES.items():
        opt, sch = new(make)
        lrs = [lr_of(opt)]
        resume_at = steps // 2
        saved = None
        for k in range(1, steps + 1):
            opt.step()
            sch.step()
            lrs.append(lr_of(opt))
            if k == resume_at:
                saved = (opt.state_dict(), sch.state_dict())
        opt2, sch2 = new(make)
        opt2.load_state_dict(saved[0])
        sch2.load_state_dict(saved[1])
        resumed = [lr_of(opt2)]
        for _ in range(resume_at, steps):
            opt2.step()
            sch2.step()
            resumed.append(lr_of(opt2))
        cases.append({"name": name, "lr": LR, "steps": steps, "lrs": lrs, "resume_at": resume_at, "resumed": resumed})
    with open(OUT, "w") as f:
        json.dump({"torch": torch.__version__, "cases": cases}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
