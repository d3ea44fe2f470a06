package serve

import (
	"fmt"
	"math"
	"slices"

	"github.com/wickml/wick/internal/parallel"
	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
)

// stepState is a step's slices, kept from step to step so that a step
// allocates none of them anew.
type stepState struct {
	b       nn.Batch
	members []*sequence // the sequences in the batch, by b.Seqs index
	tables  [][]int     // their block tables
	samples []int       // members that sample, by b.Logits index
	next    []int       // their tokens; −1: non-finite logits; −2: errs[r]
	errs    []error
}

// sampleSmall is the sampling work (rows × vocabulary) below which a
// step samples its rows on its own goroutine: starting goroutines would
// cost more than the split saves.
const sampleSmall = 1 << 16

// step runs one batched forward pass over the running sequences: one
// token of each decoding sequence, and whole prefill chunks of the others
// while the step's budget of one chunk's cost lasts (older sequences
// first; see chunks.go). It
// samples the sequences whose pending tokens are all in, sends their
// events, ends the finished ones and returns those still running.
func (e *Engine) step(running []*sequence) []*sequence {
	st := &e.st
	b := &st.b
	b.Tokens, b.Seqs, b.Logits = b.Tokens[:0], b.Seqs[:0], b.Logits[:0]
	members, tables, samples := st.members[:0], st.tables[:0], st.samples[:0]
	defer func() {
		// the sequences and tables go with the step
		clear(st.members[:cap(st.members)])
		clear(st.tables[:cap(st.tables)])
	}()
	budget := e.costs.budget // of the step's prefill chunks, in all
	prompt := 0              // prompt tokens in the batch
	for _, s := range running {
		n := len(s.tokens) - s.cached
		if s.generated == 0 {
			// prefilling: the prompt's next chunk, cut where the chunk
			// plan cuts it whatever else runs; it waits for a step with
			// room rather than being cut otherwise
			n = e.costs.chunk(s.cached, len(s.tokens))
			c := e.costs.cost(s.cached, n, s.cached+n == len(s.tokens))
			if c > budget && budget < e.costs.budget {
				continue
			}
			budget -= c
			prompt += n
		}
		if s.cached+n == len(s.tokens) {
			b.Logits = append(b.Logits, len(b.Tokens)+n-1)
			samples = append(samples, len(members))
		}
		b.Seqs = append(b.Seqs, nn.BatchSeq{Start: len(b.Tokens), Len: n, Pos: s.cached})
		b.Tokens = append(b.Tokens, s.tokens[s.cached:s.cached+n]...)
		members = append(members, s)
		tables = append(tables, s.table)
	}
	st.members, st.tables, st.samples = members, tables, samples
	if e.kh != nil {
		if b.AttendHost == nil {
			b.AttendRows = func(layer int, q, k, v *tensor.Tensor) *tensor.Tensor {
				return e.attendRows(layer, &st.b, st.tables, q, k, v)
			}
			b.AttendHost = func(layer, lo, hi int, q, k, v, out []float32) {
				e.attendHost(layer, &st.b, st.tables, lo, hi, q, k, v, out)
			}
		}
	} else if b.Attend == nil {
		b.Attend = func(layer, i int, q, k, v *tensor.Tensor) *tensor.Tensor {
			return e.attend(layer, st.tables[i], st.b.Seqs[i].Pos, q, k, v)
		}
	}

	logits, err := e.forward(b)
	// sampling runs outside the lock (top-p sorts the vocabulary); the
	// counters move before the events go out, so that a client who has its
	// answer finds them counted
	next := slices.Grow(st.next[:0], len(samples))[:len(samples)]
	sampleErrs := slices.Grow(st.errs[:0], len(samples))[:len(samples)]
	clear(sampleErrs)
	st.next, st.errs = next, sampleErrs
	if err == nil {
		v := e.vocab
		sample := func(r int) {
			s, row := members[samples[r]], logits[r*v:(r+1)*v]
			next[r] = -1
			if finite(row) {
				if e.observe != nil {
					e.observe(s, row)
				}
				next[r], sampleErrs[r] = sampleRow(row, s.opts)
			}
		}
		if len(samples)*v < sampleSmall {
			for r := range samples {
				sample(r)
			}
		} else {
			parallel.Each(len(samples), sample)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.counts.Steps++
	e.counts.BatchSizes[len(members)]++
	e.counts.PromptTokens += uint64(prompt)
	if err != nil {
		// the step failed as a whole: end its sequences, keep the others
		for _, s := range members {
			e.finish(s, FinishError, err)
		}
		return slices.DeleteFunc(running, func(s *sequence) bool { return s.done })
	}
	for i, s := range members {
		e.holding -= e.alloc.BlocksFor(s.cached)
		s.cached += b.Seqs[i].Len
		e.holding += e.alloc.BlocksFor(s.cached)
	}
	for r, i := range samples {
		s, tok := members[i], next[r]
		if tok == -2 {
			e.finish(s, FinishError, sampleErrs[r])
			continue
		}
		if tok < 0 {
			e.finish(s, FinishError, fmt.Errorf("%w (position %d)", errNonFinite, s.cached-1))
			continue
		}
		s.generated++
		e.counts.GeneratedTokens++
		if slices.Contains(s.req.StopIDs, tok) {
			e.finish(s, FinishStop, nil)
			continue
		}
		s.out <- Event{Token: tok}
		s.tokens = append(s.tokens, tok)
		if s.generated >= s.maxNew {
			e.finish(s, FinishLength, nil)
		}
	}
	return slices.DeleteFunc(running, func(s *sequence) bool { return s.done })
}

// forward runs b through the model and returns its logits on the host; a
// panic in the model (a bug, a device error) becomes the error of this
// step's requests instead of the process's end.
func (e *Engine) forward(b *nn.Batch) (logits []float32, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("serve: the engine's step failed: %v", r)
		}
	}()
	return e.model.ForwardBatch(b).Float32s(), nil
}

// attend is nn.Batch.Attend over the paged cache: it writes the keys and
// values k, v [Hkv, T, D] of positions pos … pos+T−1 into their slots of
// the sequence's blocks (table) and returns the causal attention of
// q [H, T, D] over the keys and values K, V [Hkv, pos+T, D] of positions
// 0 … pos+T−1: views of the cache where the blocks are consecutive,
// copies of their runs otherwise (a single query under grouped-query
// attention meets each key/value head once, with all its query heads).
// Everything it reads is the sequence's
// own, and K and V have the same strides either way (only where they lie
// differs), so its result does not depend on the other sequences of the
// step, nor on where the cache put the sequence.
func (e *Engine) attend(layer int, table []int, pos int, q, k, v *tensor.Tensor) *tensor.Tensor {
	bs := e.cfg.BlockSize
	kc, vc := e.k[layer], e.v[layer] // [blocks, BlockSize, Hkv, D]
	t := q.Size(1)
	for t0 := 0; t0 < t; {
		p := pos + t0
		blk, slot := table[p/bs], p%bs
		n := min(bs-slot, t-t0)
		kc.Select(0, blk).Slice(0, slot, slot+n).CopyFrom(k.Slice(1, t0, t0+n).Transpose(0, 1))
		vc.Select(0, blk).Slice(0, slot, slot+n).CopyFrom(v.Slice(1, t0, t0+n).Transpose(0, 1))
		t0 += n
	}
	return e.attendCached(layer, table, pos, q)
}

// attendCached is attend once the keys and values of q's positions are in
// the cache.
func (e *Engine) attendCached(layer int, table []int, pos int, q *tensor.Tensor) *tensor.Tensor {
	bs := e.cfg.BlockSize
	kc, vc := e.k[layer], e.v[layer] // [blocks, BlockSize, Hkv, D]
	t := q.Size(1)
	s := pos + t
	nb := (s + bs - 1) / bs
	gather := func(c *tensor.Tensor) *tensor.Tensor { // [1, Hkv, S, D]
		var runs []*tensor.Tensor // [positions, Hkv, D] views of consecutive blocks
		for j := 0; j < nb; {
			r := j + 1
			for r < nb && table[r] == table[r-1]+1 {
				r++
			}
			runs = append(runs, c.Slice(0, table[j], table[j]+r-j).Reshape((r-j)*bs, c.Size(2), c.Size(3)))
			j = r
		}
		all := runs[0]
		if len(runs) > 1 {
			all = tensor.Cat(runs, 0)
		}
		return all.Slice(0, 0, s).Transpose(0, 1).Unsqueeze(0)
	}
	keys, vals := gather(kc), gather(vc)
	h, hkv, d := q.Size(0), kc.Size(2), q.Size(2)
	if t > 1 || h == hkv {
		return nn.CausalAttention(q.Unsqueeze(0), keys, vals, pos).Squeeze(0)
	}
	// one query under grouped-query attention: the h/hkv query heads of
	// a key/value head are the rows of one product with its keys, rather
	// than the keys repeated for each (nn.RepeatKV copies them); no mask,
	// the query sees every position
	g := h / hkv
	att := q.Reshape(1, hkv, g, d).MatMul(keys.Transpose(-2, -1)).MulScalar(float32(1 / math.Sqrt(float64(d))))
	return att.Softmax(-1).MatMul(vals).Reshape(h, 1, d)
}

// sampleRow draws the next token of one sequence from its logits row. A
// panic while sampling (logits that overflow once divided by a small
// temperature leave no finite probabilities) fails this sequence alone,
// with −2 and the error, instead of the whole step.
func sampleRow(row []float32, opts nn.GenerateOptions) (tok int, err error) {
	defer func() {
		if r := recover(); r != nil {
			tok, err = -2, fmt.Errorf("serve: sampling failed: the logits divided by the temperature are not finite (%v)", r)
		}
	}()
	return nn.SampleRow(row, opts), nil
}
