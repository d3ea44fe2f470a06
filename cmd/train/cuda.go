//go:build cuda

package main

// In a build with the cuda tag, the GPU backend registers itself for
// --device=cuda. Such a binary needs the NVIDIA driver's libcuda.so.1 to
// load; without a usable GPU it starts all the same, --device=auto picks
// the CPU and --device=cuda fails with the driver's reason (cuda/cuinit.c).
import _ "github.com/wickml/wick/cuda"
