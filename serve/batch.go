package serve

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
)

// step runs one batched forward pass over the running sequences: one
// token of each decoding sequence, and whole prefill chunks of the others
// while the step's PrefillChunk budget lasts (older sequences first). It
// samples the sequences whose pending tokens are all in, sends their
// events, ends the finished ones and returns those still running.
func (e *Engine) step(running []*sequence) []*sequence {
	var (
		b       nn.Batch
		members []*sequence // the sequences in the batch, by b.Seqs index
		tables  [][]int     // their block tables
		samples []int       // members that sample, by b.Logits index
	)
	budget := e.cfg.PrefillChunk
	prompt := 0 // prompt tokens in the batch
	for _, s := range running {
		n := len(s.tokens) - s.cached
		if s.generated == 0 {
			// prefilling: chunks of PrefillChunk from the prompt's start,
			// the same boundaries whatever else runs
			n = min(n, e.cfg.PrefillChunk)
			if n > budget {
				continue
			}
			budget -= n
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
	b.Attend = func(layer, i int, q, k, v *tensor.Tensor) *tensor.Tensor {
		return e.attend(layer, tables[i], b.Seqs[i].Pos, q, k, v)
	}

	logits, err := e.forward(&b)
	// sampling runs outside the lock (top-p sorts the vocabulary); the
	// counters move before the events go out, so that a client who has its
	// answer finds them counted
	next := make([]int, len(samples)) // −1: non-finite logits
	if err == nil {
		for i, s := range members {
			s.cached += b.Seqs[i].Len
		}
		v := e.vocab
		eachParallel(len(samples), func(r int) {
			s, row := members[samples[r]], logits[r*v:(r+1)*v]
			next[r] = -1
			if finite(row) {
				if e.observe != nil {
					e.observe(s, row)
				}
				next[r] = nn.SampleNext(tensor.New(row, 1, v), s.opts)[0]
			}
		})
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
	for r, i := range samples {
		s, tok := members[i], next[r]
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
// copies of their runs otherwise. Everything it reads is the sequence's
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
	return nn.CausalAttention(q.Unsqueeze(0), gather(kc), gather(vc), pos).Squeeze(0)
}

// eachParallel runs f(0) … f(n−1) on up to GOMAXPROCS goroutines and
// returns when all have returned; a panic in f is re-raised on the
// caller's goroutine. Each request samples with its own generator, so the
// order in which they run changes nothing.
func eachParallel(n int, f func(i int)) {
	workers := min(n, runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var (
		next   atomic.Int64
		wg     sync.WaitGroup
		once   sync.Once
		failed any
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					once.Do(func() { failed = r })
				}
			}()
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				f(i)
			}
		}()
	}
	wg.Wait()
	if failed != nil {
		panic(failed)
	}
}
