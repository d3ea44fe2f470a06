#!/usr/bin/env bash
# setup_peer.sh installs what the PyTorch and OpenBLAS peers of the
# benchmark scripts (bench_ops.sh, bench_sgemm.sh, bench_train.sh) and the
# golden generators (gen_golden.py, gen_golden_nn.py,
# gen_golden_pretrained.py) need on a Debian machine: Debian's python3-torch
# and numpy, OpenBLAS (without it numpy and torch fall back to the reference
# BLAS, 30× slower), GNU time for peak RSS, hyperfine for whole-command
# timings, and benchstat. Needs root.
# Nothing here is needed to build or test Wick.
set -euo pipefail
sudo=""
[ "$(id -u)" = 0 ] || sudo=sudo
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-torch python3-numpy libopenblas0-pthread time hyperfine >/dev/null
command -v benchstat >/dev/null || go install golang.org/x/perf/cmd/benchstat@latest
/usr/bin/python3 -c 'import torch, numpy; print("torch", torch.__version__, "numpy", numpy.__version__)'
