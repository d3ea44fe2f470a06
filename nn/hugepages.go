package nn

import "github.com/wickml/wick/tensor"

// hugePages is tensor.HugePages, a variable for the tests.
var hugePages = tensor.HugePages

// adviseHugePages asks for transparent huge pages under m's parameters
// (tensor.HugePages). Every model nn builds, loads or converts passes
// through it: generation reads each weight from memory once per token,
// and with huge pages that stream takes fewer TLB misses and prefetcher
// stops (float32 generation 1.03–1.2× the tokens/s on an AMD EPYC, bfloat16
// about the same; docs/benchmarks.md).
func adviseHugePages(m Module) { hugePages(m.Parameters()...) }
