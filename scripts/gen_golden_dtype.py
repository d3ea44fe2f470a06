#!/usr/bin/python3
"""Writes testdata/dtype/casts.bin: PyTorch's casts between float32 and
bfloat16/float16, for tensor/dtype16_test.go.

Run from the repository root with Debian's python3-torch (1.13):
    /usr/bin/python3 scripts/gen_golden_dtype.py

The file holds, little-endian:
  magic b"WICKDT01"
  sha256 (32 bytes) of the 2^16 float32 results of bfloat16 -> float32 over
    every bit pattern 0..0xffff in order, then the same for float16
  u32 n, then n float32 inputs (bit patterns), then their n bfloat16
    results, then their n float16 results (u16 bit patterns)
Widening is stored as a hash (every result is needed, 512 KB in full);
narrowing in full: a few thousand random bit patterns, random normal
values and the hard cases (ties of both formats, NaN payloads, signed
zeros, subnormals, the largest values and the first that overflow).
Each array is converted as one tensor, as a model's tensors are.
"""
import hashlib
import struct

import numpy as np
import torch

rng = np.random.default_rng(20261201)


def widen(dtype):
    bits = np.arange(1 << 16, dtype=np.uint16).view(np.int16)
    t = torch.from_numpy(bits.copy()).view(dtype)
    return t.float().numpy().astype("<f4").tobytes()


def hard_cases():
    out = []
    # signed zeros, infinities, NaN payloads of both signs
    out += [0x00000000, 0x80000000, 0x7F800000, 0xFF800000]
    out += [0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FBFFFFF, 0x7FC00001,
            0xFFC12345, 0x7FFFFFFF, 0xFFFFFFFF, 0x7F812345, 0xFF80FFFF,
            0x7FC08000, 0x7FC18000]
    # float32 subnormals and the smallest normals
    out += [0x00000001, 0x80000001, 0x007FFFFF, 0x00800000, 0x00400000,
            0x00008000, 0x00018000, 0x0000FFFF]
    # bfloat16 ties (low 16 bits 0x8000) with even and odd kept bits,
    # and one ulp either side
    for hi in [0x3F80, 0x3F81, 0x4049, 0xC2F7, 0x7F7F, 0x0080, 0x0001]:
        for lo in [0x7FFF, 0x8000, 0x8001]:
            out.append(hi << 16 | lo)
    # largest float32 (overflows bfloat16 to inf) and bfloat16's max
    out += [0x7F7FFFFF, 0xFF7FFFFF, 0x7F7F0000, 0x7F7F7FFF, 0x7F7F8000]
    f16 = lambda v: int(np.float32(v).view(np.uint32))
    # float16: max, halfway to the next binade (rounds to inf), just below
    out += [f16(65504), f16(65519), f16(65519.996), f16(65520), f16(65536),
            f16(-65520), f16(1e10), f16(-1e10)]
    # float16 subnormals: min 2^-24, the tie 2^-25, just above and below,
    # the largest subnormal, the smallest normal, ties among subnormals
    for v in [2**-24, 2**-25, 2**-26, 3 * 2**-26, 5 * 2**-26, 2**-14,
              2**-14 - 2**-24, 2**-14 - 2**-25, 1023.5 * 2**-24,
              1.5 * 2**-24, 2.5 * 2**-24]:
        out += [f16(v), f16(-v)]
    b = f16(2**-25)
    out += [b - 1, b + 1]
    # float16 ties in the normal range (low 13 bits 0x1000), both parities
    for v in [1.0, 1.0009765625, 3.14, -2.5, 1000.0, 6e-5]:
        x = f16(v) & ~0x1FFF
        for lo in [0x0FFF, 0x1000, 0x1001, 0x3000]:
            out.append(x | lo)
    return out


def main():
    cases = hard_cases()
    cases += list(rng.integers(0, 1 << 32, 3000, dtype=np.uint64).astype(np.uint32))
    normal = (rng.standard_normal(2000) * np.exp(rng.uniform(-20, 20, 2000))).astype(np.float32)
    cases += list(normal.view(np.uint32))
    x = np.array(cases, dtype=np.uint32)
    xf = torch.from_numpy(x.view(np.float32).copy())
    bf = xf.to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
    hf = xf.to(torch.float16).view(torch.int16).numpy().view(np.uint16)
    with open("testdata/dtype/casts.bin", "wb") as f:
        f.write(b"WICKDT01")
        f.write(hashlib.sha256(widen(torch.bfloat16)).digest())
        f.write(hashlib.sha256(widen(torch.float16)).digest())
        f.write(struct.pack("<I", len(x)))
        f.write(x.astype("<u4").tobytes())
        f.write(bf.astype("<u2").tobytes())
        f.write(hf.astype("<u2").tobytes())
    # the NaN results, for the record (PyTorch's scalar and vector paths differ)
    nan = np.isnan(x.view(np.float32))
    print("cases", len(x), "bf16 NaN results", sorted({hex(v) for v in bf[nan]})[:8],
          "f16 NaN results", sorted({hex(v) for v in hf[nan]})[:8])


main()
