#!/usr/bin/env python3
"""Side-by-side eval-loss curves of Wick (cmd/train's log.jsonl) and PyTorch
(scripts/quality_peer.py's log), as a text table. Standard library only, so
any python3 runs it.

    python3 scripts/compare_loss.py --wick /tmp/quality/log.jsonl \\
        --torch /tmp/quality_peer/log.jsonl
    # with several seeds per side, to see the seed-to-seed noise:
    python3 scripts/compare_loss.py \\
        --wick /tmp/quality/log.jsonl --wick /tmp/quality_seed1/log.jsonl \\
        --torch /tmp/quality_peer/log.jsonl --torch /tmp/quality_peer_s1/log.jsonl

Both logs hold JSON lines; the {"kind":"eval","iter":N,"train_loss":...,
"val_loss":...} lines are used, the rest ignored (if one log holds two evals
of the same iter, e.g. after a resume, the last one counts).

Printed:
  1. every run's eval losses (one column pair per run);
  2. per iter: the mean over runs of each side, the difference Wick - PyTorch,
     and the noise: the largest train/val spread (max - min) between seeds of
     either side at that iter (needs 2 runs on at least one side);
  3. a summary from iter --skip on (default 250: iter 0 is the random
     initialisation, whose loss depends on the seed only): the largest and
     mean differences; the seed-to-seed sigma of one run's eval loss, pooled
     over those iters and both sides (sample variances between the runs of
     each side, 2+ runs on a side needed); the sigma of the difference of
     the means, sigma*sqrt(1/n_wick + 1/n_torch); every point whose
     |difference| exceeds --tol (default 3) of those sigmas; and the final
     iter's numbers. The seed changes the initialisation, the training
     batches and the eval batches, so sigma covers all three.

Caveat: cmd/train evaluates the same eval_iters batches at every evaluation
(generators seeded by --seed alone) while nanoGPT, and so quality_peer.py,
draws fresh ones each time. A Wick curve therefore carries one fixed
eval-set offset for the whole run (its points are not independent across
iters); compare several seeds, or sharpen the final numbers with more eval
batches (quality_peer.py --final_eval_iters, cmd/train --resume --eval_only
--eval_iters on a copy of the run directory).

--check exits 1 when some point is outside; with one run per side it
compares with --abs_tol (default 0.05) instead.
"""
import argparse
import json
import sys


def read_evals(path):
    """Returns {iter: (train_loss, val_loss)} of the eval lines of path."""
    ev = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit("compare_loss: %s:%d: %s" % (path, n, e))
            if rec.get("kind") != "eval":
                continue
            ev[int(rec["iter"])] = (float(rec["train_loss"]), float(rec["val_loss"]))
    if not ev:
        sys.exit("compare_loss: %s: no eval lines" % path)
    return ev


def mean(xs):
    return sum(xs) / len(xs)


def spread(xs):
    return max(xs) - min(xs) if len(xs) > 1 else None


def fmt(x, w=8, signed=False):
    if x is None:
        return "-".rjust(w)
    return (("%+.4f" if signed else "%.4f") % x).rjust(w)


def main():
    ap = argparse.ArgumentParser(description="compare eval-loss curves of Wick and PyTorch")
    ap.add_argument("--wick", action="append", required=True, help="cmd/train log.jsonl (repeat for more seeds)")
    ap.add_argument("--torch", action="append", required=True, help="quality_peer.py log (repeat for more seeds)")
    ap.add_argument("--skip", type=int, default=250, help="summary ignores iters below this")
    ap.add_argument("--check", action="store_true", help="exit 1 if the curves differ by more than the noise")
    ap.add_argument("--tol", type=float, default=3.0, help="allowed |difference| in sigmas of the difference")
    ap.add_argument("--abs_tol", type=float, default=0.05, help="allowed |difference| when one run per side gives no sigma")
    a = ap.parse_args()

    runs = [("W%d" % i, p, read_evals(p)) for i, p in enumerate(a.wick)] + \
           [("T%d" % i, p, read_evals(p)) for i, p in enumerate(a.torch)]
    wick = [r for r in runs if r[0][0] == "W"]
    torch = [r for r in runs if r[0][0] == "T"]
    iters = sorted(set.intersection(*[set(r[2]) for r in runs]))
    if not iters:
        sys.exit("compare_loss: the logs share no eval iter")

    print("runs:")
    for name, path, _ in runs:
        print("  %s  %s" % (name, path))
    print()

    # 1. every run
    print("eval losses of every run (train / val):")
    head = "%6s" % "iter" + "".join("  %17s" % ("%s train/val" % name) for name, _, _ in runs)
    print(head)
    for it in iters:
        print("%6d" % it + "".join("  %s/%s" % (fmt(r[2][it][0]), fmt(r[2][it][1])) for r in runs))
    print()

    # 2. side by side
    nw, nt = len(wick), len(torch)
    print("side by side (means over %d Wick and %d PyTorch run%s; diff = Wick - PyTorch;"
          " noise = largest seed-to-seed spread of either side):" % (nw, nt, "" if nt == 1 else "s"))
    print("%6s  %8s %8s  %8s %8s  %8s %8s  %8s %8s" % (
        "iter", "W train", "W val", "T train", "T val", "d train", "d val", "nz train", "nz val"))
    rows = []
    for it in iters:
        wt, wv = mean([r[2][it][0] for r in wick]), mean([r[2][it][1] for r in wick])
        tt, tv = mean([r[2][it][0] for r in torch]), mean([r[2][it][1] for r in torch])
        spreads_t = [s for s in (spread([r[2][it][0] for r in wick]), spread([r[2][it][0] for r in torch])) if s is not None]
        spreads_v = [s for s in (spread([r[2][it][1] for r in wick]), spread([r[2][it][1] for r in torch])) if s is not None]
        nzt = max(spreads_t) if spreads_t else None
        nzv = max(spreads_v) if spreads_v else None
        rows.append((it, wt - tt, wv - tv, nzt, nzv))
        print("%6d  %s %s  %s %s  %s %s  %s %s" % (
            it, fmt(wt), fmt(wv), fmt(tt), fmt(tv), fmt(wt - tt, signed=True), fmt(wv - tv, signed=True),
            fmt(nzt), fmt(nzv)))
    print()

    # 3. summary
    late_iters = [it for it in iters if it >= a.skip] or iters
    late = [r for r in rows if r[0] in late_iters]
    max_d = max(max(abs(r[1]), abs(r[2])) for r in late)
    print("iters >= %d: max |diff| train %.4f, val %.4f; mean diff train %+.4f, val %+.4f" % (
        a.skip, max(abs(r[1]) for r in late), max(abs(r[2]) for r in late),
        mean([r[1] for r in late]), mean([r[2] for r in late])))
    # sigma of one run's eval loss: the within-side sample variances at every
    # late iter, pooled over iters and both sides (weighted by their degrees
    # of freedom); the difference of the two means then has
    # sigma * sqrt(1/nw + 1/nt).
    sig = {}
    for k, what in ((0, "train"), (1, "val")):
        ss, dof = 0.0, 0
        for side in (wick, torch):
            if len(side) < 2:
                continue
            for it in late_iters:
                xs = [r[2][it][k] for r in side]
                m = mean(xs)
                ss += sum((x - m) ** 2 for x in xs)
                dof += len(xs) - 1
        sig[what] = ((ss / dof) ** 0.5, dof) if dof else (None, 0)
    for what in ("train", "val"):
        s, dof = sig[what]
        if s is None:
            print("%s: seed-to-seed sigma unknown (one run per side); --check uses --abs_tol %.4f" % (what, a.abs_tol))
        else:
            print("%s: seed-to-seed sigma of one run %.4f (pooled, %d dof); sigma of the diff %.4f" % (
                what, s, dof, s * (1.0 / nw + 1.0 / nt) ** 0.5))
    last = iters[-1]
    print("final iter %d: Wick val %s (runs: %s), PyTorch val %s (runs: %s)" % (
        last, fmt(mean([r[2][last][1] for r in wick]), 0), ", ".join("%.4f" % r[2][last][1] for r in wick),
        fmt(mean([r[2][last][1] for r in torch]), 0), ", ".join("%.4f" % r[2][last][1] for r in torch)))
    bad = []
    for it, dt, dv, _, _ in late:
        for d, what in ((dt, "train"), (dv, "val")):
            s = sig[what][0]
            lim = a.tol * s * (1.0 / nw + 1.0 / nt) ** 0.5 if s is not None else a.abs_tol
            if abs(d) > lim:
                bad.append("iter %d %s: |diff| %.4f > %.4f" % (it, what, abs(d), lim))
    if bad:
        print("outside the noise at %d point%s:" % (len(bad), "" if len(bad) == 1 else "s"))
        for b in bad:
            print("  " + b)
    else:
        print("every point from iter %d on is within the noise (%s)" % (
            late_iters[0], "%g sigma of the diff" % a.tol if all(v[0] is not None for v in sig.values())
            else "--abs_tol %g where sigma is unknown" % a.abs_tol))
    if a.check and bad:
        sys.exit(1)

if __name__ == "__main__":
    main()
