package nn

import (
	"sync"

	"github.com/wickml/wick/internal/blas"
	"github.com/wickml/wick/internal/kernels"
	"github.com/wickml/wick/internal/parallel"
	"github.com/wickml/wick/tensor"
)

// The fused CPU step of GPT.ForwardBatch: for a float32 model on the CPU
// and a batch with AttendHost, one pass per layer over flat buffers
// reused from step to step, with no tensor per op. A small model's step
// (the CPU recipe's: 4 layers of 128, a few hundred microseconds for 16
// rows) is otherwise spent mostly in the dispatch, allocation and
// collection of some 60 eager ops and their goroutine handoffs. Every
// number is computed by the kernels the eager ops run, in the same order,
// so the fused step gives the eager step's bits (TestForwardBatchFused):
//
//	x = wte[token] + wpe[pos]                       (N, C)
//	per layer: h = LN1(x)                           kernels.LayerNormRow
//	           q, k, v = h·Wattnᵀ + b               blas.SgemmRowsT
//	           a = AttendHost(q, k, v)              (N, H·D)
//	           x = x + (a·Wprojᵀ + b)
//	           x = x + (GELU(LN2(x)·Wfcᵀ + b)·Wproj2ᵀ + b)
//	logits = LNf(x[Logits])·Wlmᵀ                    (len(Logits), V)

// fusedSmallFlops is the size of product (2·m·n·k) below which the fused
// step multiplies on its own goroutine: waking the pool costs more than
// splitting such a product saves.
const fusedSmallFlops = 8 << 20

// fusedSplitFlops is the least work of a step's layers (2·m·n·k summed
// over their products) for which the fused step splits a batch whose
// products all run on one goroutine (fusedSmallFlops) in two runs of
// sequences, each through the layers on a goroutine of its own: then a
// small model's step, whose products are too small to split, still uses
// two processors, at the cost of one handoff per step rather than one
// per product. Every row is computed from its own sequence alone either
// way, so the split changes no bit. (A variable: tests lower it.)
var fusedSplitFlops float64 = 1 << 20

// fusedScratch is the fused step's buffers, grown as needed and reused
// through fusedPool (a step may run on many goroutines at once).
type fusedScratch struct {
	x, h, qkv, q, k, v, att, y, fc, rows []float32
	ln                                   kernels.LNScratch
}

var fusedPool = sync.Pool{New: func() any { return new(fusedScratch) }}

// grow returns b with length n, reallocated when its capacity is short.
func grow(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:n]
}

// fusedLinear is a Linear layer's weight [Out, In] and bias as host
// slices: a float32 weight in w, or the bit patterns of a bfloat16 one in
// w16 (the decoding steps'), and the bias in float32 (widened from a
// bfloat16 one exactly, as the eager Linear widens it).
type fusedLinear struct {
	w       []float32
	w16     []uint16
	b       []float32
	in, out int
}

// product writes x·W_rᵀ to y[r] for the rows r0 ≤ r < r1 of l's weight,
// x one row, on the calling goroutine: Sgemm's one-row path for a float32
// weight, GemmBF16's (its bfloat16 dot products) for a bfloat16 one, the
// kernels the eager product splits its rows over.
func (l fusedLinear) product(y, x []float32, r0, r1 int) {
	if l.w16 != nil {
		blas.GemmBF16(1, r1-r0, l.in, blas.Mat16{F: x, LD: l.in}, blas.Mat16{H: l.w16[r0*l.in:], LD: l.in, Trans: true}, y[r0:r1], r1-r0, 1)
		return
	}
	blas.Sgemm(false, true, 1, r1-r0, l.in, x, l.in, l.w[r0*l.in:], l.in, y[r0:r1], r1-r0, false, 1)
}

// fusedTable is an embedding table [rows, width] as host slices: float32
// in f, or bfloat16 bit patterns in h.
type fusedTable struct {
	f []float32
	h []uint16
}

// row writes row i of t, widened to float32 (exactly), to dst, whose
// length is the table's width.
func (t fusedTable) row(dst []float32, i int) {
	w := len(dst)
	if t.h != nil {
		blas.WidenBF16(dst, t.h[i*w:(i+1)*w])
		return
	}
	copy(dst, t.f[i*w:(i+1)*w])
}

// fusedLN is a LayerNorm's weight and bias (either may be nil).
type fusedLN struct {
	w, b []float32
	eps  float32
}

type fusedBlock struct {
	ln1, ln2   fusedLN
	attn, proj fusedLinear
	fc, proj2  fusedLinear
	geluTanh   bool
}

// fusedGPT is g's weights as host slices.
type fusedGPT struct {
	wte, wpe fusedTable
	blocks   []fusedBlock
	lnf      fusedLN
	head     fusedLinear
}

// hostF32 returns t's float32 elements on the host, or false where t is
// not a contiguous float32 tensor on the CPU. A nil t gives nil, true.
func hostF32(t *tensor.Tensor) ([]float32, bool) {
	if t == nil {
		return nil, true
	}
	if t.Device() != tensor.CPU || t.DType() != tensor.Float32 || !t.IsContiguous() {
		return nil, false
	}
	return t.HostFloat32s(), true
}

// hostBF16 returns t's bit patterns on the host, or false where t is not
// a contiguous bfloat16 tensor on the CPU.
func hostBF16(t *tensor.Tensor) ([]uint16, bool) {
	if t == nil || t.Device() != tensor.CPU || t.DType() != tensor.BFloat16 || !t.IsContiguous() {
		return nil, false
	}
	return t.HostBits16(), true
}

// hostWeights gathers a model's weights as host slices for a fused step;
// ok stays true while every one qualifies (float32, or bfloat16 where bf16
// is set, contiguous on the CPU; no unmerged LoRA adapter). The decoding
// steps set bf16: their products read a bfloat16 weight as it is stored,
// and its small vectors (norms, biases) are widened into wide, a buffer of
// the step's scratch that done grows for the next step where it was short.
type hostWeights struct {
	ok   bool
	bf16 bool
	wide *[]float32
	used int
}

// f32 returns hostF32 of t, noting a tensor that does not qualify (the
// key/value caches, written in place).
func (h *hostWeights) f32(t *tensor.Tensor) []float32 {
	s, good := hostF32(t)
	h.ok = h.ok && good
	return s
}

// bits16 returns hostBF16 of t where bf16 is set, else false (without
// touching t's storage).
func (h *hostWeights) bits16(t *tensor.Tensor) ([]uint16, bool) {
	if !h.bf16 {
		return nil, false
	}
	return hostBF16(t)
}

// vec returns a vector parameter (a norm's weight, a bias; nil gives nil)
// in float32: t's own elements, or where bf16 is set a bfloat16 t widened
// (exactly, as the eager ops widen it).
func (h *hostWeights) vec(t *tensor.Tensor) []float32 {
	b, is16 := h.bits16(t)
	if !is16 {
		return h.f32(t)
	}
	n := len(b)
	var d []float32
	if h.used+n <= len(*h.wide) {
		d = (*h.wide)[h.used : h.used+n : h.used+n]
	} else {
		d = make([]float32, n)
	}
	h.used += n
	blas.WidenBF16(d, b)
	return d
}

// table returns an embedding table as it is stored (bfloat16 where bf16
// is set).
func (h *hostWeights) table(t *tensor.Tensor) fusedTable {
	if b, is16 := h.bits16(t); is16 {
		return fusedTable{h: b}
	}
	return fusedTable{f: h.f32(t)}
}

// linear returns l's weight (bfloat16 as it is stored where bf16 is set)
// and bias, noting an unmerged LoRA adapter.
func (h *hostWeights) linear(l *Linear) fusedLinear {
	if l.lora != nil && !l.lora.merged {
		h.ok = false
	}
	f := fusedLinear{b: h.vec(l.Bias), in: l.In, out: l.Out}
	if b, is16 := h.bits16(l.Weight); is16 {
		f.w16 = b
	} else {
		f.w = h.f32(l.Weight)
	}
	return f
}

// done grows the widening buffer to what this step used, so that the
// next step widens without allocating.
func (h *hostWeights) done() {
	if h.wide != nil && h.used > len(*h.wide) {
		*h.wide = make([]float32, h.used)
	}
}

// fused returns g's weights for the fused step, or false where the fused
// step does not compute what the eager one does: weights off the CPU or
// not float32 (bfloat16 too where hw.bf16 is set), an unmerged LoRA
// adapter, an unknown GELU.
func (g *GPT) fused(hw *hostWeights) (*fusedGPT, bool) {
	vec, lin := hw.vec, hw.linear
	ln := func(l *LayerNorm) fusedLN { return fusedLN{w: vec(l.Weight), b: vec(l.Bias), eps: l.Eps} }
	f := &fusedGPT{wte: hw.table(g.Wte.Weight), wpe: hw.table(g.Wpe.Weight), lnf: ln(g.LnF), head: lin(g.LmHead)}
	for _, bl := range g.H {
		a := bl.MLP.Gelu.Approximate
		if a != "" && a != "none" && a != "tanh" {
			hw.ok = false
		}
		f.blocks = append(f.blocks, fusedBlock{
			ln1: ln(bl.Ln1), ln2: ln(bl.Ln2),
			attn: lin(bl.Attn.CAttn), proj: lin(bl.Attn.CProj),
			fc: lin(bl.MLP.CFc), proj2: lin(bl.MLP.CProj),
			geluTanh: a == "tanh",
		})
	}
	return f, hw.ok
}

// layerNormRows writes LN(x) of each of the n rows of x [n, len(l.w)] to
// dst, as LayerNorm.Forward computes it.
func layerNormRows(dst, x []float32, n, c int, l fusedLN, s *kernels.LNScratch) {
	for r := range n {
		kernels.LayerNormRow(dst[r*c:(r+1)*c], x[r*c:(r+1)*c], l.w, l.b, l.eps, s)
	}
}

// linear writes x [n, l.in] · l.wᵀ + l.b to y [n, l.out], as linearRows
// computes it.
func linear(y, x []float32, n int, l fusedLinear) {
	threads := 0
	if 2*float64(n)*float64(l.in)*float64(l.out) < fusedSmallFlops {
		threads = 1
	}
	blas.SgemmRowsT(n, l.out, l.in, x, l.in, l.w, l.in, y, l.out, threads)
	if l.b != nil {
		for r := range n {
			yr := y[r*l.out : (r+1)*l.out]
			kernels.Arith(kernels.Add, yr, yr, l.b, false)
		}
	}
}

// addTo adds y to x, element by element (kernels.Arith: the IEEE sums a
// plain loop gives, in vector registers).
func addTo(x, y []float32) {
	kernels.Arith(kernels.Add, x, x, y, false)
}

// geluRows applies GELU to each row of x [n, w] in place, as the GELU
// op's CPU kernels compute a row alone (rowwise): the vector kernels on
// its longest prefix they take, GELU32 on the rest; GELUTanh32 throughout
// for the tanh approximation.
func geluRows(x []float32, n, w int, tanh bool) {
	for r := range n {
		row := x[r*w : (r+1)*w]
		if tanh {
			for i, v := range row {
				row[i] = kernels.GELUTanh32(v)
			}
			continue
		}
		k := kernels.GELUVec(row, row)
		for i, v := range row[k:] {
			row[k+i] = kernels.GELU32(v)
		}
	}
}

// forwardFused is ForwardBatch's fused CPU step over f, g's weights.
func (g *GPT) forwardFused(b *Batch, f *fusedGPT) *tensor.Tensor {
	n, c := len(b.Tokens), g.Config.NEmbd
	s := fusedPool.Get().(*fusedScratch)
	defer fusedPool.Put(s)
	x := grow(s.x, n*c)
	s.x = x
	for _, q := range b.Seqs {
		for t := range q.Len {
			i := q.Start + t
			tok, pos := b.Tokens[i], q.Pos+t
			te, pe, xr := f.wte.f[tok*c:(tok+1)*c], f.wpe.f[pos*c:(pos+1)*c], x[i*c:(i+1)*c]
			for j := range xr {
				xr[j] = te[j] + pe[j]
			}
		}
	}
	if cut := f.splitAt(b); cut > 0 {
		parallel.For(2, 1, func(lo, hi int) {
			for part := lo; part < hi; part++ {
				r := fusedPool.Get().(*fusedScratch)
				if part == 0 {
					f.layers(b, 0, cut, x, c, r)
				} else {
					f.layers(b, cut, len(b.Seqs), x, c, r)
				}
				fusedPool.Put(r)
			}
		})
	} else {
		f.layers(b, 0, len(b.Seqs), x, c, s)
	}
	m := len(b.Logits)
	s.rows = grow(s.rows, m*c)
	for i, r := range b.Logits {
		copy(s.rows[i*c:(i+1)*c], x[r*c:(r+1)*c])
	}
	s.h = grow(s.h, max(n, m)*c)
	layerNormRows(s.h, s.rows, m, c, f.lnf, &s.ln)
	logits := make([]float32, m*f.head.out)
	linear(logits, s.h, m, f.head)
	return tensor.FromHostFloat32s(logits, m, f.head.out)
}

// splitAt returns where forwardFused splits b's sequences in two runs,
// b.Seqs[:cut] and b.Seqs[cut:], at the sequence boundary nearest half
// its rows, or 0 where it runs them as one: on one processor, for one
// sequence, where a product is large enough to be split itself
// (fusedSmallFlops) or the layers' work is below fusedSplitFlops.
func (f *fusedGPT) splitAt(b *Batch) int {
	if len(b.Seqs) < 2 || parallel.Workers() < 2 {
		return 0
	}
	n := float64(len(b.Tokens))
	var work, largest float64
	for _, bl := range f.blocks {
		for _, l := range [...]fusedLinear{bl.attn, bl.proj, bl.fc, bl.proj2} {
			w := 2 * n * float64(l.in) * float64(l.out)
			work += w
			largest = max(largest, w)
		}
	}
	if largest >= fusedSmallFlops || work < fusedSplitFlops {
		return 0
	}
	cut, off := 0, len(b.Tokens)
	for i := 1; i < len(b.Seqs); i++ {
		d := 2*b.Seqs[i].Start - len(b.Tokens)
		if d < 0 {
			d = -d
		}
		if d < off {
			cut, off = i, d
		}
	}
	return cut
}

// layers runs the rows of b's sequences lo … hi−1 in x [len(b.Tokens), c]
// through f's blocks in place, with s's buffers.
func (f *fusedGPT) layers(b *Batch, lo, hi int, x []float32, c int, s *fusedScratch) {
	r0, last := b.Seqs[lo].Start, b.Seqs[hi-1]
	n := last.Start + last.Len - r0
	x = x[r0*c : (r0+n)*c]
	for l, bl := range f.blocks {
		s.h = grow(s.h, n*c)
		layerNormRows(s.h, x, n, c, bl.ln1, &s.ln)
		w := bl.attn.out / 3
		s.qkv = grow(s.qkv, n*bl.attn.out)
		linear(s.qkv, s.h, n, bl.attn)
		s.q, s.k, s.v, s.att = grow(s.q, n*w), grow(s.k, n*w), grow(s.v, n*w), grow(s.att, n*w)
		for r := range n {
			row := s.qkv[r*3*w : (r+1)*3*w]
			copy(s.q[r*w:(r+1)*w], row[:w])
			copy(s.k[r*w:(r+1)*w], row[w:2*w])
			copy(s.v[r*w:(r+1)*w], row[2*w:])
		}
		b.AttendHost(l, lo, hi, s.q, s.k, s.v, s.att)
		s.y = grow(s.y, n*c)
		linear(s.y, s.att, n, bl.proj)
		addTo(x, s.y)
		layerNormRows(s.h, x, n, c, bl.ln2, &s.ln)
		s.fc = grow(s.fc, n*bl.fc.out)
		linear(s.fc, s.h, n, bl.fc)
		geluRows(s.fc, n, bl.fc.out, bl.geluTanh)
		linear(s.y, s.fc, n, bl.proj2)
		addTo(x, s.y)
	}
}
