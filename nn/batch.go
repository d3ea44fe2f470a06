package nn

import (
	"fmt"

	"github.com/wickml/wick/autograd"
	"github.com/wickml/wick/internal/kernels"
	"github.com/wickml/wick/internal/parallel"
	"github.com/wickml/wick/tensor"
)

// Serving many sequences at once.
//
// A serving engine (package serve) runs one forward pass per step over the
// new tokens of every running sequence: one token of each sequence that is
// decoding, a chunk of the prompt of each that is being prefilled, laid
// end to end as the rows of one matrix, so that every weight is read once
// per step for all of them. Only attention mixes positions, and it is the
// engine's: the model hands each sequence's queries, keys and values to
// Batch.Attend, which keeps the keys and values where the engine keeps
// them (a paged cache) and attends over that sequence's own positions.

// Batch is one step of a serving engine over several sequences: their new
// tokens laid end to end, each sequence at its own positions.
type Batch struct {
	// Tokens are the new tokens, sequence after sequence.
	Tokens []int
	// Seqs are the sequences' runs of Tokens, in order and covering
	// Tokens.
	Seqs []BatchSeq
	// Logits are the rows of Tokens whose logits ForwardBatch returns, in
	// this order (usually the last token of each sequence that samples).
	Logits []int
	// Attend computes the attention of sequence seq's new tokens at
	// layer. q [H, T, D] are their queries, k and v [Hkv, T, D] their keys
	// and values, after the model's q/k norms and rotary embeddings (H
	// query heads and Hkv key/value heads of D features, BatchLM.KVShape).
	// Attend stores k and v at the sequence's positions Pos … Pos+T−1 and
	// returns [H, T, D], CausalAttention(q, K, V, Pos) over the keys and
	// values K, V of its positions 0 … Pos+T−1. It must not keep q, k, v
	// or its result after it returns (it copies what it stores).
	// ForwardBatch calls it for the sequences of a layer on several
	// goroutines at once (each call with grad mode off), so the calls for
	// different sequences must not touch each other's data.
	Attend func(layer, seq int, q, k, v *tensor.Tensor) *tensor.Tensor
	// AttendRows, when not nil, is called instead of Attend, once per
	// layer for the whole batch: q [N, H, D], k and v [N, Hkv, D] are the
	// queries, keys and values of all of Tokens' rows, and it returns
	// [N, H, D], each row's attention over its own sequence as Attend
	// computes it. An engine that attends over many sequences with one
	// kernel uses it to spare a call, and the copies, per sequence. Like
	// Attend it must not keep q, k, v or its result after it returns.
	AttendRows func(layer int, q, k, v *tensor.Tensor) *tensor.Tensor
	// AttendHost, when not nil, is AttendRows over host memory for a
	// model that runs a fused CPU step (a GPT with float32 weights on the
	// CPU), for the run of sequences Seqs[lo:hi]: q [N, H·D], k and v
	// [N, Hkv·D] are the queries, keys and values of those sequences'
	// rows (row 0 is Tokens' row Seqs[lo].Start), and it writes to
	// out [N, H·D] what AttendRows returns for them. The fused step calls
	// it once per layer for each run of sequences: the whole batch, or,
	// where it splits the batch in two runs that go through the layers on
	// goroutines of their own, each run, so two calls on disjoint runs may
	// be in flight at once. The slices are the step's scratch buffers: it
	// must not keep them. A model that cannot take its fused step calls Attend
	// or AttendRows instead, so one of them must be set as well.
	AttendHost func(layer, lo, hi int, q, k, v, out []float32)
}

// BatchSeq is one sequence's run in a Batch: Tokens[Start:Start+Len] at
// positions Pos … Pos+Len−1.
type BatchSeq struct{ Start, Len, Pos int }

// BatchLM is a CausalLM that runs a Batch: what a serving engine needs of
// a model. *GPT and *Llama implement it.
type BatchLM interface {
	CausalLM
	// KVShape returns the number of layers, and the key/value heads and
	// their features per head of each layer's attention: the shape of the
	// keys and values one position adds to a cache.
	KVShape() (layers, kvHeads, headDim int)
	// ForwardBatch runs b's tokens through the model and returns the
	// logits [len(b.Logits), VocabSize] of the rows b.Logits names.
	//
	// Each row is computed from its own sequence alone, so a sequence's
	// logits have the same bits whatever other sequences share the
	// batch, as long as Attend computes each sequence's attention from
	// that sequence's keys and values: the products are
	// tensor.MatMulRowInvariant's, the norms act on each row, the
	// elementwise ops whose CPU kernels round an element by its place in
	// the buffer (GELU, SiLU's sigmoid: SIMD blocks and a scalar tail) run
	// on the whole batch only when a row is a whole number of blocks (a
	// width that is a multiple of 16) and row by row otherwise. An
	// unmerged LoRA adapter's term is computed with MatMul and is not
	// covered: merge adapters before serving.
	//
	// ForwardBatch runs the model as in evaluation mode (no dropout) and
	// records nothing for autograd. It may run on many goroutines at once,
	// like Forward. It panics if b's runs do not cover its tokens in
	// order, a position reaches ContextSize, a token is outside the
	// vocabulary, a Logits row is outside Tokens, Attend and AttendRows
	// are both nil, or the one called returns a tensor of another shape.
	ForwardBatch(b *Batch) *tensor.Tensor
}

var (
	_ BatchLM = (*GPT)(nil)
	_ BatchLM = (*Llama)(nil)
)

// check panics unless b is a well-formed batch for a model of context
// ctx and vocab tokens.
func (b *Batch) check(op string, ctx, vocab int) {
	bad := func(format string, args ...any) {
		panic(&tensor.Error{Pkg: "nn", Op: op, Msg: fmt.Sprintf(format, args...)})
	}
	if len(b.Tokens) == 0 || b.Attend == nil && b.AttendRows == nil {
		bad("expected a batch of at least one token and an Attend or AttendRows function, got %d tokens", len(b.Tokens))
	}
	next := 0
	for i, s := range b.Seqs {
		if s.Start != next || s.Len < 1 || s.Pos < 0 || s.Pos+s.Len > ctx {
			bad("sequence %d runs over tokens [%d, %d) at positions from %d: want a run from token %d of at least one token, within the context of %d positions", i, s.Start, s.Start+s.Len, s.Pos, next, ctx)
		}
		next += s.Len
	}
	if next != len(b.Tokens) {
		bad("the sequences cover %d of the batch's %d tokens", next, len(b.Tokens))
	}
	for _, t := range b.Tokens {
		if t < 0 || t >= vocab {
			bad("token %d is outside the vocabulary [0, %d)", t, vocab)
		}
	}
	for _, r := range b.Logits {
		if r < 0 || r >= len(b.Tokens) {
			bad("logits of row %d asked, outside the batch's %d tokens", r, len(b.Tokens))
		}
	}
}

// positions returns each token's position.
func (b *Batch) positions() []int {
	pos := make([]int, 0, len(b.Tokens))
	for _, s := range b.Seqs {
		for p := range s.Len {
			pos = append(pos, s.Pos+p)
		}
	}
	return pos
}

// attend runs Attend for every sequence at layer over q [N, H, D] and k,
// v [N, Hkv, D] and returns the heads' outputs side by side, [N, H·D].
func (b *Batch) attend(op string, layer int, q, k, v *tensor.Tensor) *tensor.Tensor {
	h, d := q.Size(1), q.Size(2)
	if b.AttendRows != nil {
		n := q.Size(0)
		o := b.AttendRows(layer, q, k, v)
		if o == nil || o.Dim() != 3 || o.Size(0) != n || o.Size(1) != h || o.Size(2) != d {
			var shape []int
			if o != nil {
				shape = o.Shape()
			}
			panic(&tensor.Error{Pkg: "nn", Op: op, Msg: fmt.Sprintf("AttendRows of layer %d returned shape %v, want [%d %d %d]", layer, shape, n, h, d)})
		}
		return o.Reshape(n, h*d)
	}
	outs := make([]*tensor.Tensor, len(b.Seqs))
	eachSeq(len(b.Seqs), func(i int) {
		s := b.Seqs[i]
		run := func(z *tensor.Tensor) *tensor.Tensor { return z.Slice(0, s.Start, s.Start+s.Len).Transpose(0, 1) }
		o := b.Attend(layer, i, run(q), run(k), run(v))
		if o == nil || o.Dim() != 3 || o.Size(0) != h || o.Size(1) != s.Len || o.Size(2) != d {
			var shape []int
			if o != nil {
				shape = o.Shape()
			}
			panic(&tensor.Error{Pkg: "nn", Op: op, Msg: fmt.Sprintf("Attend of layer %d, sequence %d returned shape %v, want [%d %d %d]", layer, i, shape, h, s.Len, d)})
		}
		outs[i] = o.Transpose(0, 1).Reshape(s.Len, h*d)
	})
	if len(outs) == 1 {
		return outs[0]
	}
	return tensor.Cat(outs, 0)
}

// rows returns the rows of x [N, C] that b.Logits names.
func (b *Batch) rows(x *tensor.Tensor) *tensor.Tensor {
	return x.IndexSelect(0, tensor.FromInts(b.Logits, len(b.Logits)).To(x.Device()))
}

// runBatch runs f, the body of a ForwardBatch, without recording and with
// its temporaries private (tensor.Scope).
func runBatch(f func() *tensor.Tensor) *tensor.Tensor {
	var out *tensor.Tensor
	autograd.NoGrad(func() { out = tensor.Scope(f) })
	return out
}

// linearRows is l.Forward on x [N, In] with the row-invariant product
// (for bfloat16 or float16 weights, rowsMatMul16).
func linearRows(l *Linear, x *tensor.Tensor) *tensor.Tensor {
	var y *tensor.Tensor
	if l.Weight.DType() != x.DType() {
		y = rowsMatMul16(x, l.Weight.T())
	} else {
		y = x.MatMulRowInvariant(l.Weight.T())
	}
	if l.Bias != nil {
		y = y.Add(l.Bias.ToDType(y.DType()))
	}
	if a := l.lora; a != nil && !a.merged {
		y = y.Add(a.delta(x))
	}
	return y
}

// simdBlock is the widest block of elements that the CPU kernels of
// GELU, Exp, Tanh and Sigmoid compute together, before a scalar tail
// that may round otherwise.
const simdBlock = 16

// rowwise applies f, an elementwise op, to x [N, W] so that each row gets
// the bits it would get alone: on the whole of x when W is a multiple of
// simdBlock (every element then falls in a SIMD block, alone or not), row
// by row otherwise.
func rowwise(x *tensor.Tensor, f func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
	n := x.Size(0)
	if n == 1 || x.Size(1)%simdBlock == 0 {
		return f(x)
	}
	rows := make([]*tensor.Tensor, n)
	for i := range rows {
		rows[i] = f(x.Slice(0, i, i+1))
	}
	return tensor.Cat(rows, 0)
}

// KVShape implements BatchLM: NLayer layers of NHead heads of
// NEmbd/NHead features.
func (g *GPT) KVShape() (layers, kvHeads, headDim int) {
	return g.Config.NLayer, g.Config.NHead, g.Config.NEmbd / g.Config.NHead
}

// ForwardBatch implements BatchLM.
func (g *GPT) ForwardBatch(b *Batch) *tensor.Tensor {
	const op = "GPT.ForwardBatch"
	b.check(op, g.Config.BlockSize, g.Config.VocabSize)
	if b.AttendHost != nil {
		if f, ok := g.fused(&hostWeights{ok: true}); ok {
			return g.forwardFused(b, f)
		}
	}
	return runBatch(func() *tensor.Tensor {
		n, c, h := len(b.Tokens), g.Config.NEmbd, g.Config.NHead
		dev := g.Wte.Weight.Device()
		x := embedAdd(g.Wte, g.Wpe, tensor.FromInts(b.Tokens, n).To(dev), tensor.FromInts(b.positions(), n).To(dev))
		for i, bl := range g.H {
			qkv := linearRows(bl.Attn.CAttn, bl.Ln1.Forward(x)).Split(c, 1)
			heads := func(z *tensor.Tensor) *tensor.Tensor { return z.Reshape(n, h, c/h) }
			y := b.attend(op, i, heads(qkv[0]), heads(qkv[1]), heads(qkv[2]))
			x = x.Add(linearRows(bl.Attn.CProj, y))
			m := bl.MLP
			x = x.Add(linearRows(m.CProj, rowwise(linearRows(m.CFc, bl.Ln2.Forward(x)), m.Gelu.Forward)))
		}
		return linearRows(g.LmHead, g.LnF.Forward(b.rows(x)))
	})
}

// KVShape implements BatchLM: NumHiddenLayers layers of NumKeyValueHeads
// heads of HeadDim features.
func (m *Llama) KVShape() (layers, kvHeads, headDim int) {
	return m.Config.NumHiddenLayers, m.Config.NumKeyValueHeads, m.Config.HeadDim
}

// ForwardBatch implements BatchLM.
func (m *Llama) ForwardBatch(b *Batch) *tensor.Tensor {
	const op = "Llama.ForwardBatch"
	b.check(op, m.Config.MaxPositionEmbeddings, m.Config.VocabSize)
	return runBatch(func() *tensor.Tensor {
		n := len(b.Tokens)
		dev := m.EmbedTokens.Weight.Device()
		pos := b.positions()
		cos, sin := m.RotaryEmbeds.cosSinAt(n, func(i int) int { return pos[i] }, dev) // [N, D]
		x := activation(m.EmbedTokens.Forward(tensor.FromInts(b.Tokens, n).To(dev)))
		for i, l := range m.Layers {
			a := l.SelfAttn
			c := a.Config
			h := l.InputLayernorm.Forward(x)
			heads := func(z *tensor.Tensor, nh int, norm *RMSNorm) *tensor.Tensor { // [N, nh, D]
				z = z.Reshape(n, nh, c.HeadDim)
				if norm != nil {
					z = norm.Forward(z)
				}
				return z
			}
			// rotary over [nh, N, D] with each token's angles
			rot := func(z *tensor.Tensor) *tensor.Tensor { return ApplyRotary(z.Transpose(0, 1), cos, sin).Transpose(0, 1) }
			q := rot(heads(linearRows(a.QProj, h), c.NHeads, a.QNorm))
			k := rot(heads(linearRows(a.KProj, h), c.NKVHeads, a.KNorm))
			v := heads(linearRows(a.VProj, h), c.NKVHeads, nil)
			x = x.Add(linearRows(a.OProj, b.attend(op, i, q, k, v)))
			mlp := l.MLP
			h = l.PostAttentionLayernorm.Forward(x)
			gate := rowwise(linearRows(mlp.GateProj, h), mlp.Act.Forward)
			x = x.Add(linearRows(mlp.DownProj, gate.Mul(linearRows(mlp.UpProj, h))))
		}
		return linearRows(m.LMHead, m.Norm.Forward(b.rows(x)))
	})
}

// SampleNext returns the next token of each row of logits [B, VocabSize]
// as Generate picks it with opts: with Temperature 0 the most likely
// token (the first of equal ones), otherwise one drawn from opts.Generator
// after Temperature, TopK and TopP (the other fields are not read). A
// serving engine samples each request with its own options and generator
// through it, so that a request's tokens are those Generate would draw. It
// panics if logits is not [B, V] or Temperature or TopP is negative or NaN.
func SampleNext(logits *tensor.Tensor, opts GenerateOptions) []int {
	if logits.Dim() != 2 || !(opts.Temperature >= 0) || !(opts.TopP >= 0) {
		panic(&tensor.Error{Pkg: "nn", Op: "SampleNext", Msg: fmt.Sprintf("expected logits [B, V] and non-negative temperature and top_p, got shape %v, %v and %v", logits.Shape(), opts.Temperature, opts.TopP)})
	}
	var next []int
	autograd.NoGrad(func() { next = pickTokens(logits, opts).Ints() })
	return next
}

// SampleRow is SampleNext for one row of logits in host memory: it
// returns the token that SampleNext returns for that row (the same token,
// with the same draw from opts.Generator). For the most likely token, or
// a draw without TopK and TopP, it works on the row in place of tensor
// ops (kernels.SoftmaxRow is the CPU Softmax's row kernel): a small
// model's step samples many rows whose tensors would cost more than the
// arithmetic. row is not changed. It panics as SampleNext does.
func SampleRow(row []float32, opts GenerateOptions) int {
	n := len(row)
	if n == 0 || !(opts.Temperature >= 0) || !(opts.TopP >= 0) {
		return SampleNext(tensor.New(row, 1, n), opts)[0]
	}
	if opts.Temperature == 0 {
		// ArgMax's scan: the first maximum, or the first NaN
		best, bi := row[0], 0
		for j := 1; j < n; j++ {
			v := row[j]
			if best != best {
				break
			}
			if v > best || v != v {
				best, bi = v, j
			}
		}
		return bi
	}
	if opts.TopK > 0 && opts.TopK < n || opts.TopP > 0 && opts.TopP < 1 {
		return SampleNext(tensor.New(row, 1, n), opts)[0]
	}
	p := make([]float32, n)
	for j, v := range row {
		p[j] = v / opts.Temperature // DivScalar
	}
	if !kernels.SoftmaxRow(p, p, false) {
		return SampleNext(tensor.New(row, 1, n), opts)[0]
	}
	var next int
	autograd.NoGrad(func() { next = opts.Generator.Multinomial(tensor.FromHostFloat32s(p, 1, n)).Ints()[0] })
	return next
}

// eachSeq runs f(0) … f(n−1), each inside NoGrad, on parallel goroutines
// (parallel.Each: the sequences' attention, small products that would
// leave the other cores idle one after another); the first panic in f is
// re-raised on the caller's goroutine.
func eachSeq(n int, f func(i int)) {
	parallel.Each(n, func(i int) { autograd.NoGrad(func() { f(i) }) })
}
