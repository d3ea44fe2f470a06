package main

// A roofline prediction of one training step of gpubench on an H200, so
// that the first run on hardware can be read against it: for each kernel
// the step launches, the bytes it moves and the FLOPs it does, and its
// time as the larger of bytes / memory bandwidth and FLOPs / peak
// arithmetic rate. Real kernels reach a fraction of either roof (cuBLAS's
// SGEMM some 70-80% of the FLOP roof, simple elementwise kernels 80-90% of
// the bandwidth, the row kernels less) and each launch costs some
// microseconds on the host, which the prediction leaves out; the measured
// step should be slower than the prediction, and where it is much slower
// the per-kind shares say where to look.
//
// The counts follow what Wick runs (nn/attention.go, nn/linear.go,
// optim.AdamW, optim.ClipGradNorm): float32 everywhere, every matrix
// product full (no causal skipping in cuBLAS), biases added by a separate
// broadcast Add, the fused attention path when dropout is off and the
// explicit one (scale, mask, softmax, dropout as separate kernels) when it
// is on, gradients of parameters accumulated by an Add into .grad, and
// ClipGradNorm's one-pass norm plus the scaling (which the first steps of
// training always do).

import (
	"fmt"
	"io"
	"sort"
	"text/tabwriter"

	"github.com/wickml/wick/nn"
)

// gpuRoof is the roofline of a GPU.
type gpuRoof struct {
	name  string
	bw    float64 // memory bandwidth, bytes/s
	fp32  float64 // float32 FLOP/s (CUDA cores)
	tf32  float64 // TF32 tensor-core FLOP/s (dense)
	useTF bool    // matrix products on tensor cores
}

// h200 is an NVIDIA H200 SXM: 4.8 TB/s HBM3e, 67 TFLOP/s float32, 494
// TFLOP/s dense TF32.
var h200 = gpuRoof{name: "H200", bw: 4.8e12, fp32: 67e12, tf32: 494e12}

// kernel is one kind of launch of the step, with its traffic and work
// summed over every launch of that kind.
type kernel struct {
	kind   string // the group in the summary: "matmul", "layernorm", ...
	name   string // what it computes
	bytes  float64
	flops  float64
	gemm   bool // a cuBLAS matrix product (TF32 applies)
	launch int  // launches per step
}

// time returns the kernel's roofline time on g, in seconds.
func (k kernel) time(g gpuRoof) float64 {
	peak := g.fp32
	if k.gemm && g.useTF {
		peak = g.tf32
	}
	return max(k.bytes/g.bw, k.flops/peak)
}

// stepKernels lists the kernels of one training step of cfg on batches of
// b sequences of cfg.BlockSize tokens.
func stepKernels(cfg nn.GPTConfig, b int) []kernel {
	const f = 4.0 // bytes per float32
	L, T, C, V, H := float64(cfg.NLayer), float64(cfg.BlockSize), float64(cfg.NEmbd), float64(cfg.VocabSize), float64(cfg.NHead)
	B := float64(b)
	N := B * T // tokens
	att := B * H * T * T
	nl := cfg.NLayer
	var ks []kernel
	add := func(kind, name string, launches int, bytes, flops float64, gemm bool) {
		ks = append(ks, kernel{kind, name, bytes, flops, gemm, launches})
	}
	// gemm adds the forward product x (rows×in) · wᵀ (in×out) and its two
	// backward products, dx = dy·w and dw = dyᵀ·x, each count times, and
	// the accumulation of dw into the weight's gradient.
	gemm := func(name string, count int, rows, in, out float64) {
		c := float64(count)
		fl := 2 * rows * in * out * c
		add("matmul", name+" forward", count, f*c*(rows*in+in*out+rows*out), fl, true)
		add("matmul", name+" backward dx", count, f*c*(rows*out+in*out+rows*in), fl, true)
		add("matmul", name+" backward dw", count, f*c*(rows*out+rows*in+in*out), fl, true)
		add("grad accumulate", name+" weight grad +=", count, f*c*3*in*out, c*in*out, false)
	}
	bias := func(name string, count int, rows, out float64) {
		if !cfg.Bias {
			return
		}
		c := float64(count)
		add("elementwise", name+" bias add", count, f*c*(2*rows*out+out), c*rows*out, false)
		add("reduction", name+" bias grad (column sum)", count, f*c*(rows*out+out), c*rows*out, false)
		add("grad accumulate", name+" bias grad +=", count, f*c*3*out, c*out, false)
	}
	layernorm := func(name string, count int) {
		c := float64(count)
		add("layernorm", name+" forward", count, f*c*(2*N*C+2*N+2*C), c*8*N*C, false)
		add("layernorm", name+" backward (mean, dx, dw/db partials, sum)", 4*count, f*c*(N*C+3*N*C+2*N*C+4*C), c*16*N*C, false)
	}
	dropout := func(name string, count int, n float64) {
		if cfg.Dropout == 0 {
			return
		}
		c := float64(count)
		add("dropout", name+" mask + multiply", 2*count, f*c*(n+3*n), c*n*20, false)
		add("dropout", name+" backward multiply", count, f*c*3*n, c*n, false)
	}

	// embeddings
	add("embedding", "wte gather + wpe add", 3, f*(2*N*C+T*C+3*N*C), N*C, false)
	dropout("embedding dropout", 1, N*C)
	add("embedding", "wte scatter-add (atomics) + wpe grad", 3, f*(3*N*C+2*N*C+T*C), 2*N*C, false)

	// transformer blocks
	layernorm("ln_1, ln_2", 2*nl)
	gemm("c_attn (qkv)", nl, N, C, 3*C)
	bias("c_attn", nl, N, 3*C)
	hs := C / H
	if cfg.Dropout == 0 {
		// tensor.AttentionQKV: cuBLAS reads the heads in place
		add("attention matmul", "q·kᵀ forward", nl, f*L*(2*N*C+att), 2*att*hs*L, true)
		add("attention matmul", "p·v forward", nl, f*L*(att+2*N*C), 2*att*hs*L, true)
		add("attention matmul", "backward dv, dp, dq, dk", 4*nl, f*L*(4*att+8*N*C), 8*att*hs*L, true)
		add("attention softmax", "causal softmax forward", nl, f*L*2*att, 5*att*L, false)
		add("attention softmax", "causal softmax backward", nl, f*L*3*att, 4*att*L, false)
	} else {
		// the explicit path: heads copied dense, scores scaled, masked,
		// softmaxed and dropped out by separate kernels
		add("attention matmul", "q·kᵀ, att·v forward", 2*nl, f*L*(2*att+4*N*C), 4*att*hs*L, true)
		add("attention matmul", "backward (4 products)", 4*nl, f*L*(4*att+8*N*C), 8*att*hs*L, true)
		add("elementwise", "head copies (q, k, v, y and grads)", 8*nl, f*L*16*N*C, 0, false)
		add("elementwise", "scale, causal mask (forward, backward)", 4*nl, f*L*10*att, 4*att*L, false)
		add("attention softmax", "softmax forward, backward", 2*nl, f*L*5*att, 9*att*L, false)
		dropout("attention dropout", nl, att)
	}
	gemm("attn c_proj", nl, N, C, C)
	bias("attn c_proj", nl, N, C)
	dropout("residual dropout", 2*nl, N*C)
	add("elementwise", "residual adds (forward) and gradient fan-in (backward)", 4*nl, f*L*4*3*N*C, 4*N*C*L, false)
	gemm("mlp c_fc", nl, N, C, 4*C)
	bias("mlp c_fc", nl, N, 4*C)
	add("elementwise", "GELU forward", nl, f*L*8*N*C, 20*4*N*C*L, false)
	add("elementwise", "GELU backward", nl, f*L*12*N*C, 30*4*N*C*L, false)
	gemm("mlp c_proj", nl, N, 4*C, C)
	bias("mlp c_proj", nl, N, C)

	// head and loss
	layernorm("ln_f", 1)
	gemm("lm_head (tied to wte)", 1, N, C, V)
	add("cross-entropy", "loss forward", 1, f*(N*V+2*N), 4*N*V, false)
	add("cross-entropy", "loss backward (softmax − onehot)", 1, f*(2*N*V+N), 5*N*V, false)

	// optimizer: every parameter once
	P := float64(paramCount(cfg))
	add("optimizer", "ClipGradNorm: one-pass norm", 2, f*P, 2*P, false)
	add("optimizer", "ClipGradNorm: scale (g·coef, copy back)", 2*paramTensors(cfg), f*4*P, P, false)
	add("optimizer", "AdamW (read p, g, m, v; write p, m, v)", paramTensors(cfg), f*7*P, 12*P, false)
	return ks
}

// paramCount is the number of parameters of cfg's GPT (lm_head tied to
// wte), counted from the shapes without building the model.
func paramCount(cfg nn.GPTConfig) int {
	C, b := cfg.NEmbd, 0
	if cfg.Bias {
		b = 1
	}
	layer := C + b*C + // ln_1
		3*C*C + b*3*C + // c_attn
		C*C + b*C + // attn c_proj
		C + b*C + // ln_2
		4*C*C + b*4*C + // c_fc
		4*C*C + b*C // mlp c_proj
	return cfg.VocabSize*C + cfg.BlockSize*C + cfg.NLayer*layer + C + b*C
}

// paramTensors is the number of parameter tensors of cfg's GPT (one AdamW
// launch each): wte, wpe, ln_f and six weights per layer, and with biases
// ln_f's and six more per layer.
func paramTensors(cfg nn.GPTConfig) int {
	if cfg.Bias {
		return 4 + 12*cfg.NLayer
	}
	return 3 + 6*cfg.NLayer
}

// predict writes the roofline prediction of one step: the total and,
// per kind of kernel, the time and its share of the step; with perKernel
// also each kernel's line.
func predict(w io.Writer, preset string, cfg nn.GPTConfig, b int, g gpuRoof, perKernel bool) (stepSeconds float64) {
	ks := stepKernels(cfg, b)
	type sum struct {
		t, bytes, flops float64
		launches        int
	}
	kinds := map[string]*sum{}
	var total sum
	for _, k := range ks {
		s := kinds[k.kind]
		if s == nil {
			s = &sum{}
			kinds[k.kind] = s
		}
		t := k.time(g)
		s.t += t
		s.bytes += k.bytes
		s.flops += k.flops
		s.launches += k.launch
		total.t += t
		total.bytes += k.bytes
		total.flops += k.flops
		total.launches += k.launch
	}
	mode := "fp32"
	if g.useTF {
		mode = "tf32"
	}
	tokens := float64(b * cfg.BlockSize)
	peak := fmt.Sprintf("%.0f TFLOP/s", g.fp32/1e12)
	if g.useTF {
		peak += fmt.Sprintf(", matmuls %.0f", g.tf32/1e12)
	}
	fmt.Fprintf(w, "predict preset=%s device=%s matmul=%s roofline ms/iter=%.2f tokens/s=%.0f (%.0f GB moved, %.2f TFLOP, ~%d launches; %.1f TB/s, %s)\n",
		preset, g.name, mode, total.t*1e3, tokens/total.t, total.bytes/1e9, total.flops/1e12, total.launches, g.bw/1e12, peak)
	names := make([]string, 0, len(kinds))
	for n := range kinds {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return kinds[names[i]].t > kinds[names[j]].t })
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "  kind\tms\tshare\tGB\tGFLOP\tlaunches\t\n")
	for _, n := range names {
		s := kinds[n]
		fmt.Fprintf(tw, "  %s\t%.3f\t%.1f%%\t%.2f\t%.1f\t%d\t\n", n, s.t*1e3, 100*s.t/total.t, s.bytes/1e9, s.flops/1e9, s.launches)
	}
	tw.Flush()
	if perKernel {
		sort.SliceStable(ks, func(i, j int) bool { return ks[i].time(g) > ks[j].time(g) })
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  kernel\tkind\tms/step\tbound\tlaunches\n")
		for _, k := range ks {
			bound := "memory"
			if k.flops/g.fp32 > k.bytes/g.bw || (k.gemm && g.useTF && k.flops/g.tf32 > k.bytes/g.bw) {
				bound = "compute"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%.3f\t%s\t%d\n", k.name, k.kind, k.time(g)*1e3, bound, k.launch)
		}
		tw.Flush()
	}
	return total.t
}
