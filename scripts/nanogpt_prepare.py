"""nanoGPT's data/shakespeare_char/prepare.py and data/shakespeare/prepare.py,
transcribed to run on a slice of the shipped tiny Shakespeare, for the
fixtures of cmd/train's tests of nanoGPT's prepared layout
(scripts/gen_nanogpt_data.sh runs it).

Usage: nanogpt_prepare.py INPUT NCHARS OUTDIR ENCODER

Writes OUTDIR/shakespeare_char/{input.txt,train.bin,val.bin,meta.pkl} and
OUTDIR/shakespeare/{input.txt,train.bin,val.bin} from the first NCHARS
characters of INPUT, as the two prepare.py scripts do with all of it: the
text split at 90% of its characters, the ids written with numpy as uint16,
meta.pkl with pickle.dump (Python's default protocol). nanoGPT's GPT-2
split encodes with Python tiktoken's encode_ordinary, which does not install
here: ENCODER is a command that reads text on stdin and prints its ids as a
JSON list, tiktoken's "gpt2" encode_ordinary through npm's @dqbd/tiktoken
(tiktoken's Rust core built for WASM).
"""
import json
import os
import pickle
import subprocess
import sys

import numpy as np


def shakespeare_char(data, out):
    # data/shakespeare_char/prepare.py: one id per character, in sorted order
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "input.txt"), "w") as f:
        f.write(data)
    chars = sorted(set(data))
    vocab_size = len(chars)
    stoi = {c: i for i, c in enumerate(chars)}
    itos = {i: c for i, c in enumerate(chars)}
    cut = int(len(data) * 0.9)
    for name, part in (("train.bin", data[:cut]), ("val.bin", data[cut:])):
        ids = np.array([stoi[c] for c in part], dtype=np.uint16)
        ids.tofile(os.path.join(out, name))
        print(f"shakespeare_char/{name}: {len(ids)} tokens")
    with open(os.path.join(out, "meta.pkl"), "wb") as f:
        pickle.dump({"vocab_size": vocab_size, "itos": itos, "stoi": stoi}, f)
    print(f"shakespeare_char/meta.pkl: vocab size {vocab_size}")


def shakespeare(data, out, encoder):
    # data/shakespeare/prepare.py: GPT-2 ids of each split, encoded apart
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "input.txt"), "w", encoding="utf-8") as f:
        f.write(data)
    cut = int(len(data) * 0.9)
    for name, part in (("train.bin", data[:cut]), ("val.bin", data[cut:])):
        got = subprocess.run(encoder, shell=True, input=part.encode("utf-8"), capture_output=True, check=True)
        ids = np.array(json.loads(got.stdout), dtype=np.uint16)
        ids.tofile(os.path.join(out, name))
        print(f"shakespeare/{name}: {len(ids)} tokens")


def main():
    src, nchars, outdir, encoder = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    with open(src, "r", encoding="utf-8") as f:
        data = f.read()[:nchars]
    shakespeare_char(data, os.path.join(outdir, "shakespeare_char"))
    shakespeare(data, os.path.join(outdir, "shakespeare"), encoder)


if __name__ == "__main__":
    main()
