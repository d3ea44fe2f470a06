package nn

import (
	"math"
	"sync"

	"github.com/wickml/wick/autograd"
	"github.com/wickml/wick/internal/blas"
	"github.com/wickml/wick/internal/kernels"
	"github.com/wickml/wick/internal/parallel"
	"github.com/wickml/wick/tensor"
)

// The fused CPU decoding step of Llama.ForwardCached: one token of one
// sequence (idx [1, 1]) through a float32 or bfloat16 model on the CPU (a
// bfloat16 model's products read its weights as they are stored, and its
// norm weights and biases are widened to float32 as the eager ops widen
// them), over flat buffers reused from step to step, with no tensor per
// op. The eager step runs some 50 ops a layer, each with its dispatch,
// allocations and (at more than one thread) its own parallel loop: 7
// products a layer split over the pool one after another, with the
// elementwise ops between them on one goroutine. Here a layer is five
// parallel loops — q, k and v products in one, attention over the
// key/value heads, o_proj, gate and up products in one, down_proj — and a
// few row kernels between them. Every number is computed by the kernels
// the eager ops run, in the same order, so the fused step gives the eager
// step's bits (TestLlamaDecodeFused):
//
//	x = embed[token]                                  [Hidden]
//	per layer: h = RMSNorm(x)                         kernels.RMSNormRow
//	           q, k, v = h·Wqᵀ, h·Wkᵀ, h·Wvᵀ (+ b)     gemvRows, rows split
//	           q, k = RMSNorm per head (QKNorm), rotary
//	           k, v → the cache at pos
//	           a = softmax(q·Kᵀ/√D)·V per head group   blas.Sgemm, kernels.SoftmaxScaled
//	           x = x + (a·Woᵀ + b)
//	           h = RMSNorm(x)
//	           x = x + down(SwiGLU(h·Wgᵀ, h·Wuᵀ))       kernels.SwiGLU
//	logits = RMSNorm(x)·Wheadᵀ                        [VocabSize]
//
// The products of one row by a weight are dot products of that row with
// each of the weight's rows (gemv.go in internal/blas), so splitting a
// weight's rows between goroutines, at multiples of four rows as Sgemm
// splits them, never changes a bit.

// fusedRMS is an RMSNorm's weight and epsilon.
type fusedRMS struct {
	w   []float32
	eps float32
}

type fusedLlamaLayer struct {
	inNorm, postNorm   fusedRMS
	qNorm, kNorm       *fusedRMS // nil without QKNorm
	q, k, v, o         fusedLinear
	gate, up, down     fusedLinear
	kc, vc             []float32 // the cache [NKVHeads, capacity, HeadDim]
	heads, kvHeads, hd int
}

// fusedLlama is a Llama's weights and a cache as host slices.
type fusedLlama struct {
	embed  fusedTable
	layers []fusedLlamaLayer
	norm   fusedRMS
	head   fusedLinear
	cap    int
}

// llamaScratch is the fused step's buffers, grown as needed and reused
// through llamaScratchPool (steps may run on many goroutines at once).
type llamaScratch struct {
	x, h, q, k, v, att, o, p, gate, up, act, sig, cos, sin []float32
	wide                                                   []float32 // hostWeights.vec's
}

var llamaScratchPool = sync.Pool{New: func() any { return new(llamaScratch) }}

// fusedDecode returns m's weights and cache for the fused step, with s's
// buffer holding the widened vectors of a bfloat16 model, or false where
// the fused step does not compute what the eager one does: a recorded
// pass, an autocast region, weights or cache off the CPU, weights not
// float32 or bfloat16 (a cache not float32), not contiguous, an unmerged
// LoRA adapter.
func (m *Llama) fusedDecode(cache *KVCache, s *llamaScratch) (*fusedLlama, bool) {
	if autograd.Enabled() || len(cache.K) != len(m.Layers) || len(cache.V) != len(m.Layers) {
		return nil, false
	}
	if _, on := tensor.AutocastDType(); on {
		return nil, false
	}
	c := m.Config
	// SwiGLU's elementwise loops run as one range below 2·tensor's grain
	// (1<<15) elements, as kernels.SwiGLU does
	if c.IntermediateSize >= 1<<16 {
		return nil, false
	}
	hw := &hostWeights{ok: true, bf16: true, wide: &s.wide}
	defer hw.done()
	f32, lin := hw.f32, hw.linear
	rms := func(r *RMSNorm) fusedRMS {
		if r.Weight == nil {
			hw.ok = false
		}
		return fusedRMS{w: hw.vec(r.Weight), eps: r.Eps}
	}
	f := &fusedLlama{embed: hw.table(m.EmbedTokens.Weight), norm: rms(m.Norm), head: lin(m.LMHead), cap: cache.Capacity}
	for i, l := range m.Layers {
		a := l.SelfAttn
		fl := fusedLlamaLayer{
			inNorm: rms(l.InputLayernorm), postNorm: rms(l.PostAttentionLayernorm),
			q: lin(a.QProj), k: lin(a.KProj), v: lin(a.VProj), o: lin(a.OProj),
			gate: lin(l.MLP.GateProj), up: lin(l.MLP.UpProj), down: lin(l.MLP.DownProj),
			kc: f32(cache.K[i]), vc: f32(cache.V[i]),
			heads: a.Config.NHeads, kvHeads: a.Config.NKVHeads, hd: a.Config.HeadDim,
		}
		if a.QNorm != nil {
			qn, kn := rms(a.QNorm), rms(a.KNorm)
			fl.qNorm, fl.kNorm = &qn, &kn
		}
		want := []int{1, fl.kvHeads, cache.Capacity, fl.hd}
		for _, t := range []*tensor.Tensor{cache.K[i], cache.V[i]} {
			if t == nil || t.Dim() != 4 || t.Size(0) != want[0] || t.Size(1) != want[1] || t.Size(2) != want[2] || t.Size(3) != want[3] {
				hw.ok = false
			}
		}
		f.layers = append(f.layers, fl)
	}
	return f, hw.ok
}

// gemvRows computes y_i = x·W_iᵀ (+ b_i) for each of ls, x one row: the
// rows of all the weights split over the pool in one parallel loop, at
// multiples of four rows of a weight (the quadruples of the one-row
// kernels, float32 and bfloat16), each range's products on its goroutine
// (fusedLinear.product).
func gemvRows(x []float32, ls []fusedLinear, ys [][]float32) {
	quads := 0
	for _, l := range ls {
		quads += (l.out + 3) / 4
	}
	parallel.For(quads, 16, func(lo, hi int) {
		s0 := 0
		for i, l := range ls {
			q := (l.out + 3) / 4
			a, b := max(lo, s0), min(hi, s0+q)
			if a < b {
				l.product(ys[i], x, 4*(a-s0), min(4*(b-s0), l.out))
			}
			s0 += q
		}
	})
	for i, l := range ls {
		if l.b != nil {
			addTo(ys[i][:l.out], l.b)
		}
	}
}

// decodeFused is ForwardCached's fused step for the token tok at position
// pos of f's cache, with s's buffers (fusedDecode's s); it returns the
// logits [1, VocabSize].
func (m *Llama) decodeFused(f *fusedLlama, s *llamaScratch, tok, pos int) *tensor.Tensor {
	c := m.Config
	hidden := c.HiddenSize
	x := grow(s.x, hidden)
	s.x = x
	f.embed.row(x, tok)
	h := grow(s.h, hidden)
	s.h = h
	d := c.HeadDim
	s.cos, s.sin = grow(s.cos, d), grow(s.sin, d)
	m.RotaryEmbeds.cosSinRow(s.cos, s.sin, pos)
	seq := pos + 1
	scale := float32(1 / math.Sqrt(float64(d))) // as the attention's
	for _, l := range f.layers {
		kernels.RMSNormRow(h, x, l.inNorm.w, l.inNorm.eps)
		hq, hkv := l.heads*d, l.kvHeads*d
		s.q, s.k, s.v = grow(s.q, hq), grow(s.k, hkv), grow(s.v, hkv)
		gemvRows(h, []fusedLinear{l.q, l.k, l.v}, [][]float32{s.q, s.k, s.v})
		for j := range l.heads {
			qh := s.q[j*d : (j+1)*d]
			if l.qNorm != nil {
				kernels.RMSNormRow(qh, qh, l.qNorm.w, l.qNorm.eps)
			}
			kernels.RotaryRow(qh, qh, s.cos, s.sin)
		}
		for j := range l.kvHeads {
			kh := s.k[j*d : (j+1)*d]
			if l.kNorm != nil {
				kernels.RMSNormRow(kh, kh, l.kNorm.w, l.kNorm.eps)
			}
			at := (j*f.cap + pos) * d
			kernels.RotaryRow(l.kc[at:at+d], kh, s.cos, s.sin)
			copy(l.vc[at:at+d], s.v[j*d:(j+1)*d])
		}
		s.att, s.p = grow(s.att, hq), grow(s.p, l.heads*seq)
		attendCached(s.att, s.q, s.p, l.kc, l.vc, l.heads, l.kvHeads, seq, d, f.cap*d, d, scale)
		s.o = grow(s.o, hidden)
		gemvRows(s.att, []fusedLinear{l.o}, [][]float32{s.o})
		addTo(x, s.o)
		kernels.RMSNormRow(h, x, l.postNorm.w, l.postNorm.eps)
		inter := l.gate.out
		s.gate, s.up, s.act, s.sig = grow(s.gate, inter), grow(s.up, inter), grow(s.act, inter), grow(s.sig, inter)
		gemvRows(h, []fusedLinear{l.gate, l.up}, [][]float32{s.gate, s.up})
		kernels.SwiGLU(s.act, s.gate, s.up, s.sig)
		gemvRows(s.act, []fusedLinear{l.down}, [][]float32{s.o})
		addTo(x, s.o)
	}
	kernels.RMSNormRow(h, x, f.norm.w, f.norm.eps)
	logits := make([]float32, f.head.out)
	gemvRows(h, []fusedLinear{f.head}, [][]float32{logits})
	return tensor.FromHostFloat32s(logits, 1, f.head.out)
}

// attendCached writes to y [heads, d] the attention of the queries q
// [heads, d] of one position over the seq cached keys and values kc, vc
// (key/value head j's position i at j·headStride + i·rowStride: Llama's
// [kvHeads, capacity, d] cache, GPT's [capacity, heads·d]), with p
// [heads, seq] as scratch for the weights: the CPU backend's
// GroupedAttention for one query (a product of each group's queries by its
// keys, a softmax per row, a product by its values), with the threads it
// gives each product.
func attendCached(y, q, p, kc, vc []float32, heads, kvHeads, seq, d, headStride, rowStride int, scale float32) {
	g := heads / kvHeads
	if g == 1 && headStride == d && rowStride >= heads*d {
		// GPT's cache, a position's heads side by side in one row: the
		// products with their Sgemm bits, reading each row once, the
		// heads split over the pool
		parallel.For(heads, (heads+parallel.Workers()-1)/parallel.Workers(), func(lo, hi int) {
			n := hi - lo
			blas.HeadDots(n, seq, d, q[lo*d:], kc[lo*d:], rowStride, p[lo*seq:], seq)
			for r := lo; r < hi; r++ {
				kernels.SoftmaxScaled(p[r*seq:(r+1)*seq], scale)
			}
			blas.HeadAxpys(n, seq, d, p[lo*seq:], seq, vc[lo*d:], rowStride, y[lo*d:])
		})
		return
	}
	group := func(kv, threads int) {
		pg := p[kv*g*seq : (kv+1)*g*seq]
		k, v := kc[kv*headStride:], vc[kv*headStride:]
		blas.Sgemm(false, true, g, seq, d, q[kv*g*d:], d, k, rowStride, pg, seq, false, threads)
		for r := range g {
			kernels.SoftmaxScaled(pg[r*seq:(r+1)*seq], scale)
		}
		blas.Sgemm(false, false, g, d, seq, pg, seq, v, rowStride, y[kv*g*d:], d, false, threads)
	}
	// as the backend's batched MatMul: small products one per task, large
	// ones (or a single group) split inside Sgemm
	if kvHeads > 1 && g*seq*d < 1<<21 {
		parallel.For(kvHeads, 1, func(lo, hi int) {
			for kv := lo; kv < hi; kv++ {
				group(kv, 1)
			}
		})
		return
	}
	for kv := range kvHeads {
		group(kv, 0)
	}
}
