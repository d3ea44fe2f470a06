package serve

import (
	"math"

	"github.com/wickml/wick/autograd"
	"github.com/wickml/wick/internal/kernels"
	"github.com/wickml/wick/internal/parallel"
	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
)

// The CPU path of a step's attention (nn.Batch.AttendRows): one call per
// layer for the whole batch instead of one per sequence. The keys and
// values of every new token go straight into the cache's host memory, the
// long prefill chunks attend as attend does (nn.CausalAttention over
// views of the cache), and each decoding row (a sequence with one new
// token), as each token of a short prefill chunk (hostChunkWork), attends
// over its own positions with plain loops, four positions at a time
// (dot4, axpy4), or for heads of a multiple of 16 features on AVX-512
// with sixteen-lane loops (dots, axpys: attend_amd64.s):
//
//	scores = q·Kᵀ/√D, softmax (kernels.SoftmaxRow), out = weights·V
//
// with the keys and values read in place where the sequence's blocks are
// consecutive and copied end to end otherwise, the same strides either
// way. Every sum runs over the sequence's own positions in an order that
// depends on its length alone, so a row's result has the same bits
// whatever else the step holds and wherever the cache put it; the decode
// rows are split among the pool's workers instead of a goroutine per
// sequence.

// decodeGroup is the fewest decoding rows one goroutine attends to.
const decodeGroup = 4

// attendRows is nn.Batch.AttendRows over the cache's host memory: q
// [N, H, D], k and v [N, Hkv, D] are every row of b.
func (e *Engine) attendRows(layer int, b *nn.Batch, tables [][]int, q, k, v *tensor.Tensor) *tensor.Tensor {
	n, h, d := q.Size(0), q.Size(1), q.Size(2)
	out := make([]float32, n*h*d)
	e.attendHost(layer, b, tables, 0, len(b.Seqs), q.Float32s(), k.Float32s(), v.Float32s(), out)
	return tensor.FromHostFloat32s(out, n, h, d)
}

// decodeSmall is the host rows' work (multiply-adds over their
// positions, all heads) below which one goroutine attends to them all:
// waking the pool would cost more than the split saves.
const decodeSmall = 1 << 18

// hostChunkWide and hostChunkNarrow are the most work (multiply-adds of
// a prefill chunk's attention over its positions, all heads: 2·H·D·Σ
// positions seen) for which the chunk attends on the host, one decodeRow
// per token, rather than through nn.CausalAttention's tensors, with
// decodeRow's AVX-512 loops (wideHeads) and with its Go loops: below it
// the tensor path's fixed cost (its ops' dispatch, allocation and pool
// handoffs) outweighs the products' better use of the caches.
// BenchmarkAttendChunk on an AMD EPYC (Zen 5, 2 threads) put the two paths
// level at about 9M with the AVX-512 loops four wide (GPT-2's heads of 64
// at position 64), the host 1.2 to 1.7 times faster from 3M to 8.5M in
// every shape (the recipe's heads of 32, GPT-2's, Qwen3's of 128) and the
// tensor path 1.3 to 2 times faster from 22M; with the Go loops
// (WICK_CPU=avx2) level at about 35K, the tensors faster above. The path
// depends on the chunk alone (its length and position, the model's
// heads, the processor), which the chunk plan fixes whatever else runs,
// so a request's bits do not depend on its batch mates.
const (
	hostChunkWide   = 1 << 23
	hostChunkNarrow = 1 << 15
)

// hostChunkWork is the host's limit for heads of d features.
func hostChunkWork(d int) int {
	if wideHeads(d) {
		return hostChunkWide
	}
	return hostChunkNarrow
}

// chunkWork is the work of the attention of a chunk of t tokens from
// position pos, with h heads of d features: 2·h·d per position each token
// sees.
func chunkWork(pos, t, h, d int) int {
	return 2 * h * d * (t*pos + t*(t+1)/2)
}

// hostRow is one token of a step that attends on the host: token t of the
// batch's sequence i.
type hostRow struct{ i, t int }

// hostLists is attendHost's lists of a call, reused through
// Engine.lists (the fused step may attend for two runs of sequences at
// once).
type hostLists struct {
	rows    []hostRow // the decoding rows and the tokens of short chunks
	prefill []int     // the long chunks, through the tensor path
}

// attendHost is nn.Batch.AttendHost over the cache's host memory (and
// attendRows' body): q, out [N, H·D], k and v [N, Hkv·D] are the rows of
// b's sequences lo … hi−1, row 0 the first token of sequence lo.
func (e *Engine) attendHost(layer int, b *nn.Batch, tables [][]int, lo, hi int, qs, ks, vs, out []float32) {
	seqs := b.Seqs[lo:hi]
	base := seqs[0].Start // b's row of qs' row 0
	last := seqs[len(seqs)-1]
	hkv, d := e.k[layer].Size(2), e.k[layer].Size(3)
	h := len(qs) / ((last.Start + last.Len - base) * d)
	bs, row := e.cfg.BlockSize, hkv*d
	kc, vc := e.kh[layer], e.vh[layer]
	lists := e.lists.Get().(*hostLists)
	defer e.lists.Put(lists)
	rows, prefill := lists.rows[:0], lists.prefill[:0]
	work := 0 // of rows
	for j, s := range seqs {
		i, start := lo+j, s.Start-base
		table := tables[i]
		for t := range s.Len {
			p := s.Pos + t
			off := (table[p/bs]*bs + p%bs) * row
			copy(kc[off:off+row], ks[(start+t)*row:(start+t+1)*row])
			copy(vc[off:off+row], vs[(start+t)*row:(start+t+1)*row])
		}
		if w := chunkWork(s.Pos, s.Len, h, d); s.Len == 1 || w <= e.hostChunk {
			for t := range s.Len {
				rows = append(rows, hostRow{i, t})
			}
			work += w
		} else {
			prefill = append(prefill, i)
		}
	}
	lists.rows, lists.prefill = rows, prefill
	attend := func(rows []hostRow) {
		buf := e.scratch.Get().(*[]float32)
		defer e.scratch.Put(buf)
		for _, r := range rows {
			s := b.Seqs[r.i]
			o := (s.Start - base + r.t) * h * d
			e.decodeRow(kc, vc, tables[r.i], s.Pos+r.t, h, hkv, d, qs[o:o+h*d], out[o:o+h*d], buf)
		}
	}
	if len(prefill) == 0 {
		if work < decodeSmall {
			attend(rows)
			return
		}
		// the rows alone: the pool's workers take groups of them
		parallel.For(len(rows), decodeGroup, func(lo, hi int) { attend(rows[lo:hi]) })
		return
	}
	groups := 0
	if len(rows) > 0 {
		groups = min((len(rows)+decodeGroup-1)/decodeGroup, parallel.Workers())
	}
	// long prefill chunks first (the longest tasks), each on a goroutine
	// of its own, as their tensor ops run parallel loops of their own
	parallel.Each(len(prefill)+groups, func(j int) {
		if j < len(prefill) {
			i := prefill[j]
			s := b.Seqs[i]
			autograd.NoGrad(func() {
				start := s.Start - base
				qt := tensor.FromHostFloat32s(qs[start*h*d:(start+s.Len)*h*d], s.Len, h, d).Transpose(0, 1) // [H, T, D]
				o := e.attendCached(layer, tables[i], s.Pos, qt).Float32s()                                 // [H, T, D]
				for t := range s.Len {
					for hh := range h {
						copy(out[((start+t)*h+hh)*d:((start+t)*h+hh+1)*d], o[(hh*s.Len+t)*d:(hh*s.Len+t+1)*d])
					}
				}
			})
			return
		}
		g := j - len(prefill)
		attend(rows[g*len(rows)/groups : (g+1)*len(rows)/groups])
	})
}

// decodeRow writes to out [H·D] the attention of the query q [H·D] at
// position pos of the sequence whose blocks are table, over its keys and
// values at positions 0 … pos of kc and vc ([blocks, BlockSize, Hkv, D]).
// buf is scratch space, grown as needed.
func (e *Engine) decodeRow(kc, vc []float32, table []int, pos, h, hkv, d int, q, out []float32, buf *[]float32) {
	bs, row := e.cfg.BlockSize, hkv*d
	s := pos + 1
	nb := (s + bs - 1) / bs
	g := h / hkv
	need := s
	consecutive := true
	for j := 1; j < nb; j++ {
		if table[j] != table[j-1]+1 {
			consecutive = false
			break
		}
	}
	if !consecutive {
		need += 2 * s * row
	}
	if cap(*buf) < need {
		*buf = make([]float32, need)
	}
	scores := (*buf)[:s]
	var keys, vals []float32
	if consecutive {
		base := table[0] * bs * row
		keys, vals = kc[base:base+s*row], vc[base:base+s*row]
	} else {
		keys, vals = (*buf)[s:s+s*row], (*buf)[s+s*row:s+2*s*row]
		for j := range nb {
			m := min(bs, s-j*bs) * row
			src := table[j] * bs * row
			copy(keys[j*bs*row:j*bs*row+m], kc[src:src+m])
			copy(vals[j*bs*row:j*bs*row+m], vc[src:src+m])
		}
	}
	scale := float32(1 / math.Sqrt(float64(d)))
	wide := wideHeads(d)
	for hh := range h {
		kv := hh / g // the key/value head of query head hh
		qh, oh := q[hh*d:(hh+1)*d], out[hh*d:(hh+1)*d]
		sc := scores[:s]
		at := func(p int) int { return p*row + kv*d }
		p := 0
		if wide {
			dots(qh, keys[kv*d:], row, sc)
			p = s
		}
		for ; p+4 <= s; p += 4 {
			dot4(qh, keys[at(p):], keys[at(p+1):], keys[at(p+2):], keys[at(p+3):], sc[p:p+4])
		}
		for ; p < s; p++ {
			sc[p] = dot(qh, keys[at(p):])
		}
		kernels.Scale(sc, scale)
		if !kernels.SoftmaxRow(sc, sc, false) {
			for i := range oh {
				oh[i] = float32(math.NaN()) // non-finite scores: the logits say so
			}
			continue
		}
		if wide {
			axpys(oh, sc, vals[kv*d:], row)
			continue
		}
		clear(oh)
		for p = 0; p+4 <= s; p += 4 {
			axpy4(oh, sc[p:p+4], vals[at(p):], vals[at(p+1):], vals[at(p+2):], vals[at(p+3):])
		}
		for ; p < s; p++ {
			axpy(oh, sc[p], vals[at(p):])
		}
	}
}

// dot4 writes to out[0:4] the dot products of q with k0 … k3 (of q's
// length), each summed along q in order.
func dot4(q, k0, k1, k2, k3, out []float32) {
	n := len(q)
	k0, k1, k2, k3 = k0[:n], k1[:n], k2[:n], k3[:n]
	var s0, s1, s2, s3 float32
	for i, x := range q {
		s0 += x * k0[i]
		s1 += x * k1[i]
		s2 += x * k2[i]
		s3 += x * k3[i]
	}
	out[0], out[1], out[2], out[3] = s0, s1, s2, s3
}

// axpy4 adds w[0]·v0 + … + w[3]·v3 to y (of y's length), in that order.
func axpy4(y, w, v0, v1, v2, v3 []float32) {
	n := len(y)
	v0, v1, v2, v3 = v0[:n], v1[:n], v2[:n], v3[:n]
	w0, w1, w2, w3 := w[0], w[1], w[2], w[3]
	for i := range y {
		y[i] = y[i] + w0*v0[i] + w1*v1[i] + w2*v2[i] + w3*v3[i]
	}
}

// dot returns the dot product of a and b (of a's length), summed along a
// in order, as dot4 sums each of its four.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s float32
	for i, x := range a {
		s += x * b[i]
	}
	return s
}

// axpy adds w·x to y (of y's length).
func axpy(y []float32, w float32, x []float32) {
	x = x[:len(y)]
	i := 0
	for ; i+4 <= len(y); i += 4 {
		y[i] += w * x[i]
		y[i+1] += w * x[i+1]
		y[i+2] += w * x[i+2]
		y[i+3] += w * x[i+3]
	}
	for ; i < len(y); i++ {
		y[i] += w * x[i]
	}
}
