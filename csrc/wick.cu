// wick.cu: the whole kernel library as one translation unit, so that
// `go generate ./cuda` (cuda/gen.go) compiles it into one PTX module,
// cuda/kernels.ptx. Each concept lives in its own file.

#include "elementwise.cu"
#include "copy.cu"
#include "reduce.cu"
#include "softmax.cu"
#include "layernorm.cu"
#include "embedding.cu"
#include "crossentropy.cu"
#include "adamw.cu"
#include "random.cu"
#include "attention.cu"
#include "norm.cu"
#include "sort.cu"
#include "scan.cu"
#include "rmsnorm.cu"
#include "rotary.cu"
#include "swiglu.cu"
#include "gqa.cu"
