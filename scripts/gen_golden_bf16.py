#!/usr/bin/python3
"""Writes testdata/dtype/matmul_bf16.bin: PyTorch's bfloat16 matmul on the
CPU with float32 sums and one rounding, and its derivatives, for
tensor/matmul16_test.go.

PyTorch 1.13's torch.matmul on bfloat16 CPU tensors takes oneDNN for most
shapes, which sums in float32 and rounds once; for small products (16×16×16
and below when measured, and some thin ones such as 3×40×33) it falls back
to a scalar loop that rounds every product and every partial sum to
bfloat16.
Wick sums in float32 at every size, so the goldens are PyTorch's float32
matmul of the bfloat16 values (autograd in float32 for the gradients),
rounded once to bfloat16: the oneDNN result. The script checks that
torch.matmul on the bfloat16 tensors gives exactly these bits for the cases
large enough for oneDNN, and prints how many elements its scalar fallback
changes in the others.

Run from the repository root with Debian's python3-torch (1.13):
    /usr/bin/python3 scripts/gen_golden_bf16.py

The file holds, little-endian:
  magic b"WICKMM01", u32 number of cases, then per case:
  u32 flags (bit 0: A is given stored transposed, as the .t() of a
    contiguous tensor; bit 1: likewise B, as a Linear weight's .t()),
  u32 rank of A, its dims (u32), u32 rank of B, its dims: op(A) and op(B)
    as torch.matmul sees them,
  then as bfloat16 bit patterns (u16), row-major: A as stored, B as stored,
  the product, the upstream gradient G (the product's shape), and the
  gradients of A and of B (the shapes of op(A) and op(B)) from
  out.backward(G).
"""
import struct

import numpy as np
import torch

torch.manual_seed(20261202)

# (shape of op(A), shape of op(B), A stored transposed, B stored transposed)
CASES = [
    ((2, 3), (3, 4), False, False),
    ((1, 576), (576, 24), False, True),    # a token times a Linear weight's .t()
    ((3, 40), (40, 33), False, True),
    ((17, 40), (40, 33), False, False),
    ((13, 300), (300, 40), False, True),   # two depth blocks
    ((25, 64), (64, 65), True, False),     # tiles cut at every edge, A transposed
    ((2, 3, 5), (2, 5, 7), False, False),  # batched
    ((2, 1, 4, 6), (3, 6, 5), False, False),  # broadcast batch dims
    ((8,), (8, 3), False, False),          # 1-D · 2-D
    ((4, 9), (9,), False, False),          # 2-D · 1-D
    ((16,), (16,), False, False),          # dot product
]


def bits(t):
    return t.contiguous().view(torch.int16).numpy().astype("<i2").tobytes()


def make(shape, trans, scale):
    stored = list(shape)
    if trans:
        stored[-1], stored[-2] = stored[-2], stored[-1]
    t = (torch.randn(stored) * scale).bfloat16()
    return t, (t.transpose(-1, -2) if trans else t)


out = bytearray(b"WICKMM01")
out += struct.pack("<I", len(CASES))
for sa, sb, ta, tb in CASES:
    a_st, a = make(sa, ta, 1.0)
    b_st, b = make(sb, tb, 0.5)
    af = a.float().requires_grad_(True)
    bf = b.float().requires_grad_(True)
    y32 = torch.matmul(af, bf)
    g = torch.randn(y32.shape).bfloat16()
    y32.backward(g.float())
    y = y32.detach().bfloat16()
    native = torch.matmul(a, b)
    assert native.dtype == torch.bfloat16
    differ = int((native.view(torch.int16) != y.view(torch.int16)).sum())
    print("%s x %s: torch.matmul in bfloat16 differs in %d of %d elements" % (sa, sb, differ, y.numel()))
    if sa == (1, 576) or sa == (13, 300):
        assert differ == 0, "oneDNN's bfloat16 matmul should sum in float32"
    out += struct.pack("<I", (1 if ta else 0) | (2 if tb else 0))
    out += struct.pack("<I", len(sa)) + struct.pack("<%dI" % len(sa), *sa)
    out += struct.pack("<I", len(sb)) + struct.pack("<%dI" % len(sb), *sb)
    ga, gb = af.grad.bfloat16(), bf.grad.bfloat16()
    for t in (a_st, b_st, y, g, ga, gb):
        out += bits(t)
open("testdata/dtype/matmul_bf16.bin", "wb").write(bytes(out))
print("wrote testdata/dtype/matmul_bf16.bin: %d cases, %d bytes" % (len(CASES), len(out)))
