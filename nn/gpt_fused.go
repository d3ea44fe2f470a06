package nn

import (
	"math"
	"sync"

	"github.com/wickml/wick/autograd"
	"github.com/wickml/wick/internal/kernels"
	"github.com/wickml/wick/tensor"
)

// The fused CPU decoding step of GPT.ForwardCached, Llama's (llama_fused.go)
// for nanoGPT's layout: one token of one sequence (idx [1, 1]) through a
// float32 or bfloat16 model on the CPU, over flat buffers reused from step
// to step, with no tensor per op. The eager step runs some 40 ops a layer,
// each with its dispatch, allocations and (at more than one thread) its
// own parallel loop; at GPT-2's shapes that is some 4 ms of a 12 ms token
// with bfloat16 weights. Every number is computed by the kernels the eager
// ops run, in the same order, so the fused step gives the eager step's
// bits (TestGPTDecodeFused):
//
//	x = wte[token] + wpe[pos]                       [C]
//	per layer: h = LN1(x)                           kernels.LayerNormRow
//	           q, k, v = h·Wattnᵀ + b               gemvRows
//	           k, v → the cache at pos
//	           a = softmax(q·Kᵀ/√D)·V per head       attendCached
//	           x = x + (a·Wprojᵀ + b)
//	           x = x + (GELU(LN2(x)·Wfcᵀ + b)·Wproj2ᵀ + b)
//	logits = LNf(x)·Wlmᵀ                            [VocabSize]

// fusedGPTDecode is a GPT's weights and cache as host slices.
type fusedGPTDecode struct {
	*fusedGPT
	kc, vc [][]float32 // per layer [capacity, C]
}

// decodeScratch is the fused step's buffers: fusedScratch's, the
// attention weights and the widened vectors of a bfloat16 model.
type decodeScratch struct {
	fusedScratch
	p, wide []float32
}

var decodePool = sync.Pool{New: func() any { return new(decodeScratch) }}

// fusedDecode returns g's weights and cache for the fused step of the
// token at position cache.Len, with s's buffer holding the widened vectors
// of a bfloat16 model, or false where the fused step does not compute what
// the eager one does: a recorded pass, an autocast region, a dropout that
// draws masks, a position wpe lacks, weights or cache off the CPU, weights
// not float32 or bfloat16 (a cache not float32), not contiguous, an
// unmerged LoRA adapter, an unknown GELU.
func (g *GPT) fusedDecode(cache *KVCache, s *decodeScratch) (*fusedGPTDecode, bool) {
	if autograd.Enabled() || len(cache.K) != len(g.H) || len(cache.V) != len(g.H) || cache.Len >= g.Config.BlockSize {
		return nil, false
	}
	if _, on := tensor.AutocastDType(); on || g.dropoutActive() {
		return nil, false
	}
	hw := &hostWeights{ok: true, bf16: true, wide: &s.wide}
	defer hw.done()
	fg, ok := g.fused(hw)
	if !ok {
		return nil, false
	}
	f := &fusedGPTDecode{fusedGPT: fg}
	want := []int{1, cache.Capacity, g.Config.NEmbd}
	for i := range g.H {
		for _, t := range []*tensor.Tensor{cache.K[i], cache.V[i]} {
			if t == nil || t.Dim() != 3 || t.Size(0) != want[0] || t.Size(1) != want[1] || t.Size(2) != want[2] {
				return nil, false
			}
		}
		f.kc, f.vc = append(f.kc, hw.f32(cache.K[i])), append(f.vc, hw.f32(cache.V[i]))
	}
	return f, hw.ok
}

// decodeFused is ForwardCached's fused step for the token tok at position
// pos of f's cache, with s's buffers (fusedDecode's s); it returns the
// logits [1, VocabSize].
func (g *GPT) decodeFused(f *fusedGPTDecode, s *decodeScratch, tok, pos int) *tensor.Tensor {
	c, nh := g.Config.NEmbd, g.Config.NHead
	d := c / nh
	x, y, h := grow(s.x, c), grow(s.y, c), grow(s.h, c)
	s.x, s.y, s.h = x, y, h
	f.wte.row(x, tok)
	f.wpe.row(y, pos)
	addTo(x, y)
	seq := pos + 1
	scale := float32(1 / math.Sqrt(float64(d))) // as the attention's
	s.att, s.p = grow(s.att, c), grow(s.p, nh*seq)
	for l, bl := range f.blocks {
		kernels.LayerNormRow(h, x, bl.ln1.w, bl.ln1.b, bl.ln1.eps, &s.ln)
		s.qkv = grow(s.qkv, bl.attn.out)
		gemvRows(h, []fusedLinear{bl.attn}, [][]float32{s.qkv})
		kc, vc := f.kc[l], f.vc[l]
		copy(kc[pos*c:(pos+1)*c], s.qkv[c:2*c])
		copy(vc[pos*c:(pos+1)*c], s.qkv[2*c:3*c])
		attendCached(s.att, s.qkv[:c], s.p, kc, vc, nh, nh, seq, d, d, c, scale)
		gemvRows(s.att, []fusedLinear{bl.proj}, [][]float32{y})
		addTo(x, y)
		kernels.LayerNormRow(h, x, bl.ln2.w, bl.ln2.b, bl.ln2.eps, &s.ln)
		s.fc = grow(s.fc, bl.fc.out)
		gemvRows(h, []fusedLinear{bl.fc}, [][]float32{s.fc})
		geluRows(s.fc, 1, bl.fc.out, bl.geluTanh)
		gemvRows(s.fc, []fusedLinear{bl.proj2}, [][]float32{y})
		addTo(x, y)
	}
	kernels.LayerNormRow(h, x, f.lnf.w, f.lnf.b, f.lnf.eps, &s.ln)
	logits := make([]float32, f.head.out)
	gemvRows(h, []fusedLinear{f.head}, [][]float32{logits})
	return tensor.FromHostFloat32s(logits, 1, f.head.out)
}
