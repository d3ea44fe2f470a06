//go:build cuda

package main

// In a build with the cuda tag, the GPU backend registers itself for
// --device=cuda. Such a binary needs the NVIDIA driver and a GPU to start
// (DESIGN.md, hard rule 3).
import _ "github.com/wickml/wick/cuda"
