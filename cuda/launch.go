//go:build cuda

package cuda

import (
	_ "embed"
	"fmt"
	"math"
	"os"
	"unsafe"

	"github.com/wickml/wick/tensor"
	"gorgonia.org/cu"
)

// kernelsPTX is the kernel library compiled from csrc/ by `go generate`
// (gen.go); the driver compiles it for the device at load time.
//
//go:embed kernels.ptx
var kernelsPTX string

// Launch shapes (csrc/common.cuh): 1-D kernels use blocks of 256 threads,
// row kernels WICK_ROWTHREADS, both at most maxBlocks blocks.
const (
	threads    = 256
	rowThreads = 256
	maxBlocks  = 65535
)

// kernels holds the functions of the loaded PTX module, one field per
// kernel of csrc/.
type kernels struct {
	unaryContig, unary, unaryGrad                      cu.Function
	binaryContig, binary, compareI64, where            cu.Function
	copyF32, copyI64, castI64F32, castF32I64           cu.Function
	copyU16, fillF32, fillI64, fillU16                 cu.Function
	casts                                              map[[2]tensor.DType]cu.Function // [src, dst] with a 16-bit side
	reduceSmall, reduce, argreduceSmall, argreduce     cu.Function
	reducePart, reduceFinal, sumsqChunks               cu.Function
	softmax, softmaxGrad                               cu.Function
	layernorm, layernormMu, layernormDx, lnPart, lnSum cu.Function
	gather, scatterAdd                                 cu.Function
	crossEntropy, crossEntropyGrad                     cu.Function
	adamw                                              cu.Function
	randUniform, randNormal, dropoutMask               cu.Function
	attnSoftmax, attnSoftmaxGrad                       cu.Function
	sort, scan                                         cu.Function
	llama                                              llamaKernels
	gatherU16, whereU16                                cu.Function
	half                                               map[tensor.DType]*halfKernels // BFloat16, Float16
}

// halfKernels are the elementwise kernels of one 16-bit float dtype
// (csrc/elementwise.cu: float32 arithmetic, one rounding).
type halfKernels struct {
	unaryContig, unary, unaryGrad cu.Function
	binaryContig, binary          cu.Function
	compareContig, compare        cu.Function // float32 1 or 0 out
}

// llamaKernels are the fused kernels of the Llama family's layers
// (cuda/llama.go).
type llamaKernels struct {
	rmsnorm, rmsnormDx, rmsnormDwPart, rmsnormDwSum cu.Function
	rotary, swiglu, swigluGrad                      cu.Function
	gqaSoftmax, gqaSoftmaxGrad                      cu.Function
}

// loadKernels loads the embedded PTX into the current context and looks up
// every kernel. The JIT error log is part of the error.
func loadKernels() (cu.Module, *kernels, error) {
	logBuf := &cu.JITErrorLogBuffer{Buffer: make([]byte, 16384)}
	mod, err := cu.LoadDataEx(kernelsPTX, logBuf)
	if err != nil {
		msg := string(logBuf.Buffer)
		if i := indexByte(msg, 0); i >= 0 {
			msg = msg[:i]
		}
		return mod, nil, fmt.Errorf("loading the kernel PTX: %w (JIT log: %q)", err, msg)
	}
	k := &kernels{}
	table := []struct {
		name string
		fn   *cu.Function
	}{
		{"wick_unary_contig_f32", &k.unaryContig},
		{"wick_unary_f32", &k.unary},
		{"wick_unary_grad_f32", &k.unaryGrad},
		{"wick_binary_contig_f32", &k.binaryContig},
		{"wick_binary_f32", &k.binary},
		{"wick_compare_i64", &k.compareI64},
		{"wick_where_f32", &k.where},
		{"wick_copy_f32", &k.copyF32},
		{"wick_copy_i64", &k.copyI64},
		{"wick_cast_i64_f32", &k.castI64F32},
		{"wick_cast_f32_i64", &k.castF32I64},
		{"wick_fill_f32", &k.fillF32},
		{"wick_fill_i64", &k.fillI64},
		{"wick_copy_u16", &k.copyU16},
		{"wick_fill_u16", &k.fillU16},
		{"wick_gather_u16", &k.gatherU16},
		{"wick_where_u16", &k.whereU16},
		{"wick_reduce_small_f32", &k.reduceSmall},
		{"wick_reduce_f32", &k.reduce},
		{"wick_argreduce_small_f32", &k.argreduceSmall},
		{"wick_argreduce_f32", &k.argreduce},
		{"wick_reduce_part_f32", &k.reducePart},
		{"wick_reduce_final_f32", &k.reduceFinal},
		{"wick_sumsq_chunks_f32", &k.sumsqChunks},
		{"wick_softmax_f32", &k.softmax},
		{"wick_softmax_grad_f32", &k.softmaxGrad},
		{"wick_layernorm_f32", &k.layernorm},
		{"wick_layernorm_mu_f32", &k.layernormMu},
		{"wick_layernorm_dx_f32", &k.layernormDx},
		{"wick_layernorm_dwdb_part_f32", &k.lnPart},
		{"wick_layernorm_dwdb_sum_f32", &k.lnSum},
		{"wick_gather_f32", &k.gather},
		{"wick_scatter_add_f32", &k.scatterAdd},
		{"wick_crossentropy_f32", &k.crossEntropy},
		{"wick_crossentropy_grad_f32", &k.crossEntropyGrad},
		{"wick_adamw_f32", &k.adamw},
		{"wick_rand_uniform_f32", &k.randUniform},
		{"wick_rand_normal_f32", &k.randNormal},
		{"wick_dropout_mask_f32", &k.dropoutMask},
		{"wick_attn_softmax_f32", &k.attnSoftmax},
		{"wick_attn_softmax_grad_f32", &k.attnSoftmaxGrad},
		{"wick_sort_f32", &k.sort},
		{"wick_scan_f32", &k.scan},
		{"wick_rmsnorm_f32", &k.llama.rmsnorm},
		{"wick_rmsnorm_dx_f32", &k.llama.rmsnormDx},
		{"wick_rmsnorm_dw_part_f32", &k.llama.rmsnormDwPart},
		{"wick_rmsnorm_dw_sum_f32", &k.llama.rmsnormDwSum},
		{"wick_rotary_f32", &k.llama.rotary},
		{"wick_swiglu_f32", &k.llama.swiglu},
		{"wick_swiglu_grad_f32", &k.llama.swigluGrad},
		{"wick_gqa_softmax_f32", &k.llama.gqaSoftmax},
		{"wick_gqa_softmax_grad_f32", &k.llama.gqaSoftmaxGrad},
	}
	for _, e := range table {
		fn, err := mod.Function(e.name)
		if err != nil {
			return mod, nil, fmt.Errorf("kernel %s not found in the PTX: %w", e.name, err)
		}
		*e.fn = fn
	}
	k.half = map[tensor.DType]*halfKernels{}
	for _, dt := range []tensor.DType{tensor.BFloat16, tensor.Float16} {
		h := &halfKernels{}
		for _, e := range []struct {
			name string
			fn   *cu.Function
		}{
			{"wick_unary_contig_", &h.unaryContig}, {"wick_unary_", &h.unary}, {"wick_unary_grad_", &h.unaryGrad},
			{"wick_binary_contig_", &h.binaryContig}, {"wick_binary_", &h.binary},
			{"wick_compare_contig_", &h.compareContig}, {"wick_compare_", &h.compare},
		} {
			name := e.name + shortName[dt]
			fn, err := mod.Function(name)
			if err != nil {
				return mod, nil, fmt.Errorf("kernel %s not found in the PTX: %w", name, err)
			}
			*e.fn = fn
		}
		k.half[dt] = h
	}
	// the casts with a 16-bit side, wick_cast_<src>_<dst>
	k.casts = map[[2]tensor.DType]cu.Function{}
	all := []tensor.DType{tensor.Float32, tensor.Int64, tensor.BFloat16, tensor.Float16}
	for _, src := range all {
		for _, dst := range all {
			if src == dst || !is16(src) && !is16(dst) {
				continue
			}
			name := "wick_cast_" + shortName[src] + "_" + shortName[dst]
			fn, err := mod.Function(name)
			if err != nil {
				return mod, nil, fmt.Errorf("kernel %s not found in the PTX: %w", name, err)
			}
			k.casts[[2]tensor.DType{src, dst}] = fn
		}
	}
	return mod, k, nil
}

// shortName is each dtype's suffix in the kernels' names (csrc/common.cuh).
var shortName = map[tensor.DType]string{tensor.Float32: "f32", tensor.Int64: "i64", tensor.BFloat16: "bf16", tensor.Float16: "f16"}

// is16 reports whether dt is one of the 16-bit float dtypes.
func is16(dt tensor.DType) bool { return dt == tensor.BFloat16 || dt == tensor.Float16 }

func indexByte(s string, c byte) int {
	for i := range len(s) {
		if s[i] == c {
			return i
		}
	}
	return -1
}

// syncEveryLaunch makes every launch wait for the kernel and check its
// error (WICK_CUDA_SYNC=1), like CUDA_LAUNCH_BLOCKING: slow, for finding
// which kernel faulted.
var syncEveryLaunch = os.Getenv("WICK_CUDA_SYNC") == "1"

// args collects kernel parameters, one 8-byte slot each (the driver reads
// as many bytes of a slot as the parameter's type has).
type args struct {
	v [64]uint64
	n int
}

func (a *args) ptr(p cu.DevicePtr) *args { return a.u64(uint64(p)) }
func (a *args) i64(v int) *args          { return a.u64(uint64(int64(v))) }
func (a *args) i32(v int) *args          { return a.u64(uint64(uint32(int32(v)))) }
func (a *args) f32(v float32) *args      { return a.u64(uint64(math.Float32bits(v))) }
func (a *args) u64(v uint64) *args {
	a.v[a.n] = v
	a.n++
	return a
}

// layout appends the parameters of a strided launch (see packLayout).
func (a *args) layout(shape []int, strides ...[]int) *args {
	for _, v := range packLayout(shape, strides...) {
		a.u64(uint64(v))
	}
	return a
}

// launch runs fn on the device's stream with the given grid and block
// sizes, panicking with the op's name if the launch fails.
func (d *device) launch(op string, fn cu.Function, grid, gridY, block int, a *args) {
	params := make([]unsafe.Pointer, a.n)
	for i := range a.n {
		params[i] = unsafe.Pointer(&a.v[i])
	}
	if err := fn.Launch(grid, gridY, 1, block, 1, 1, 0, d.stream, params); err != nil {
		d.fail(op, "kernel launch", err)
	}
	if syncEveryLaunch {
		if err := d.stream.Synchronize(); err != nil {
			d.fail(op, "kernel execution", err)
		}
	}
}

// syncIfDebugging waits for the stream and checks it under WICK_CUDA_SYNC=1
// (for work queued by cuBLAS, which launches its own kernels).
func (d *device) syncIfDebugging(op string) {
	if syncEveryLaunch {
		if err := d.stream.Synchronize(); err != nil {
			d.fail(op, "execution", err)
		}
	}
}

// launch1D runs a grid-stride kernel over n items.
func (d *device) launch1D(op string, fn cu.Function, n int, a *args) {
	if n <= 0 {
		return
	}
	d.launch(op, fn, min((n+threads-1)/threads, maxBlocks), 1, threads, a)
}

// launchRows runs a block-per-row kernel over rows rows.
func (d *device) launchRows(op string, fn cu.Function, rows int, a *args) {
	if rows <= 0 {
		return
	}
	d.launch(op, fn, min(rows, maxBlocks), 1, rowThreads, a)
}
