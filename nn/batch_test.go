package nn_test

import (
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/wickml/wick/internal/parallel"
	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
)

// batchModels are small models of each family for the batch tests: GPT
// with the exact GELU on 4·21 = 84 features (not whole SIMD blocks: row by row) and with
// GPT-2's approximation, and the Llama family with grouped-query attention,
// Qwen3's q/k norms and biases and an MLP of 20 features (row by row).
func batchModels() map[string]nn.BatchLM {
	return map[string]nn.BatchLM{
		"gpt":      nn.NewGPTWith(nn.GPTConfig{VocabSize: 37, BlockSize: 24, NLayer: 2, NHead: 3, NEmbd: 21, Bias: true}, tensor.NewGenerator(1)),
		"gpt2-act": nn.NewGPTWith(nn.GPTConfig{VocabSize: 37, BlockSize: 24, NLayer: 1, NHead: 2, NEmbd: 16, Activation: nn.ActGELUTanh}, tensor.NewGenerator(2)),
		"qwen3": nn.NewLlamaWith(nn.LlamaConfig{
			ModelType: "qwen3", VocabSize: 29, HiddenSize: 16, IntermediateSize: 20, NumHiddenLayers: 2,
			NumAttentionHeads: 4, NumKeyValueHeads: 2, HeadDim: 6, MaxPositionEmbeddings: 24,
			RMSNormEps: 1e-6, RopeTheta: 10000, QKVBias: true, QKNorm: true,
		}, tensor.NewGenerator(3)),
	}
}

// denseCaches holds each sequence's keys and values per layer in
// [Hkv, capacity, D] tensors, the simplest Attend there is.
type denseCaches struct {
	k, v [][]*tensor.Tensor // [sequence][layer]
}

func newDenseCaches(m nn.BatchLM, seqs, capacity int) *denseCaches {
	layers, hkv, d := m.KVShape()
	c := &denseCaches{}
	for range seqs {
		var ks, vs []*tensor.Tensor
		for range layers {
			ks = append(ks, tensor.Zeros(hkv, capacity, d))
			vs = append(vs, tensor.Zeros(hkv, capacity, d))
		}
		c.k, c.v = append(c.k, ks), append(c.v, vs)
	}
	return c
}

// step runs the chunks[i] of sequence ids[i] at positions pos[i] … and
// returns each chunk's last logits.
func (c *denseCaches) step(m nn.BatchLM, ids []int, chunks [][]int, pos []int) [][]float32 {
	b := nn.Batch{}
	for i, ch := range chunks {
		b.Seqs = append(b.Seqs, nn.BatchSeq{Start: len(b.Tokens), Len: len(ch), Pos: pos[i]})
		b.Tokens = append(b.Tokens, ch...)
		b.Logits = append(b.Logits, len(b.Tokens)-1)
	}
	b.Attend = func(layer, i int, q, k, v *tensor.Tensor) *tensor.Tensor {
		p, t := pos[i], q.Size(1)
		kc, vc := c.k[ids[i]][layer], c.v[ids[i]][layer]
		kc.Slice(1, p, p+t).CopyFrom(k)
		vc.Slice(1, p, p+t).CopyFrom(v)
		return nn.CausalAttention(q.Unsqueeze(0), kc.Slice(1, 0, p+t).Unsqueeze(0), vc.Slice(1, 0, p+t).Unsqueeze(0), p).Squeeze(0)
	}
	logits := m.ForwardBatch(&b)
	v := logits.Size(1)
	all := logits.Float32s()
	out := make([][]float32, len(chunks))
	for i := range out {
		out[i] = all[i*v : (i+1)*v]
	}
	return out
}

// TestForwardBatchMatchesForward checks ForwardBatch, over prompts of
// several lengths prefilled together in chunks and then decoded together,
// against Forward of each whole sequence.
func TestForwardBatchMatchesForward(t *testing.T) {
	for name, m := range batchModels() {
		m.Eval()
		gen := tensor.NewGenerator(9)
		seqs := [][]int{make([]int, 11), make([]int, 1), make([]int, 6)}
		for _, s := range seqs {
			for j := range s {
				s[j] = gen.IntN(m.VocabSize())
			}
		}
		c := newDenseCaches(m, len(seqs), m.ContextSize())
		// the prompts in two steps (the second part may be empty: such a
		// sequence sits the step out), then three decode steps
		var ids, pos []int
		var chunks [][]int
		for i, s := range seqs {
			ids, chunks, pos = append(ids, i), append(chunks, s[:(len(s)+1)/2]), append(pos, 0)
		}
		c.step(m, ids, chunks, pos)
		ids, chunks, pos = nil, nil, nil
		for i, s := range seqs {
			if h := (len(s) + 1) / 2; h < len(s) {
				ids, chunks, pos = append(ids, i), append(chunks, s[h:]), append(pos, h)
			}
		}
		got := c.step(m, ids, chunks, pos)
		for step := range 3 {
			for j, i := range ids {
				s := seqs[i]
				want := m.Forward(tensor.FromInts(s, 1, len(s))).Select(1, len(s)-1).Float32s()
				for x := range want {
					if d := math.Abs(float64(got[j][x] - want[x])); d > 1e-4*(1+math.Abs(float64(want[x]))) {
						t.Fatalf("%s step %d sequence %d: logit %d = %v, Forward %v", name, step, i, x, got[j][x], want[x])
					}
				}
			}
			ids, chunks, pos = nil, nil, nil
			for i, s := range seqs {
				tok := (s[len(s)-1]*7 + 3) % m.VocabSize()
				ids, chunks, pos = append(ids, i), append(chunks, []int{tok}), append(pos, len(s))
				seqs[i] = append(s, tok)
			}
			got = c.step(m, ids, chunks, pos)
		}
	}
}

// TestForwardBatchInvariant checks that a sequence's logits have the
// same bits alone and beside other sequences, before or after it, at
// decode and prefill.
func TestForwardBatchInvariant(t *testing.T) {
	for name, m := range batchModels() {
		m.Eval()
		gen := tensor.NewGenerator(10)
		rnd := func(n int) []int {
			s := make([]int, n)
			for j := range s {
				s[j] = gen.IntN(m.VocabSize())
			}
			return s
		}
		target := rnd(9)
		for _, chunk := range []int{1, 4, 9} {
			alone := newDenseCaches(m, 1, m.ContextSize())
			want := alone.step(m, []int{0}, [][]int{target[:chunk]}, []int{0})[0]
			for _, others := range [][]int{{}, {3}, {1, 7}, {8, 2, 5, 1, 1}} {
				for place := 0; place <= len(others); place++ {
					c := newDenseCaches(m, len(others)+1, m.ContextSize())
					var ids, pos []int
					var chunks [][]int
					for j, n := range others {
						if j == place {
							ids, chunks, pos = append(ids, len(others)), append(chunks, target[:chunk]), append(pos, 0)
						}
						ids, chunks, pos = append(ids, j), append(chunks, rnd(n)), append(pos, 0)
					}
					if place == len(others) {
						ids, chunks, pos = append(ids, len(others)), append(chunks, target[:chunk]), append(pos, 0)
					}
					got := c.step(m, ids, chunks, pos)[place]
					for x := range want {
						if math.Float32bits(got[x]) != math.Float32bits(want[x]) {
							t.Fatalf("%s: chunk %d beside %v at %d: logit %d = %v, alone %v", name, chunk, others, place, x, got[x], want[x])
						}
					}
				}
			}
		}
	}
}

// TestForwardBatchPanics checks the batch's validation.
func TestForwardBatchPanics(t *testing.T) {
	m := batchModels()["qwen3"]
	attend := func(layer, i int, q, k, v *tensor.Tensor) *tensor.Tensor { return q }
	for _, b := range []nn.Batch{
		{Tokens: []int{1, 2}, Seqs: []nn.BatchSeq{{0, 1, 0}}, Attend: attend},
		{Tokens: []int{1, 2}, Seqs: []nn.BatchSeq{{0, 2, 23}}, Attend: attend},
		{Tokens: []int{1, 99}, Seqs: []nn.BatchSeq{{0, 2, 0}}, Attend: attend},
		{Tokens: []int{1, 2}, Seqs: []nn.BatchSeq{{0, 2, 0}}, Logits: []int{2}, Attend: attend},
		{Tokens: []int{1, 2}, Seqs: []nn.BatchSeq{{0, 2, 0}}},
		{Tokens: []int{1, 2}, Seqs: []nn.BatchSeq{{0, 2, 0}}, Logits: []int{1}, Attend: func(layer, i int, q, k, v *tensor.Tensor) *tensor.Tensor { return k }},
		{Tokens: []int{1, 2}, Seqs: []nn.BatchSeq{{0, 2, 0}}, Logits: []int{1}, AttendRows: func(layer int, q, k, v *tensor.Tensor) *tensor.Tensor { return k }},
	} {
		err := tensor.Catch(func() { m.ForwardBatch(&b) })
		if err == nil {
			t.Errorf("%+v: no panic", b)
		} else if _, ok := err.(*tensor.Error); !ok {
			t.Errorf("%+v: %v, want a *tensor.Error", b, fmt.Sprint(err))
		}
	}
}

// TestForwardBatchAttendRows checks that a batch attended through
// AttendRows, one call per layer, gives the logits it gives through
// Attend, bit for bit, when AttendRows computes each sequence's rows as
// Attend does; Attend is then never called.
func TestForwardBatchAttendRows(t *testing.T) {
	for name, m := range batchModels() {
		m.Eval()
		gen := tensor.NewGenerator(4)
		chunks := [][]int{make([]int, 5), make([]int, 1), make([]int, 3)}
		for _, ch := range chunks {
			for j := range ch {
				ch[j] = gen.IntN(m.VocabSize())
			}
		}
		pos := []int{0, 0, 0}
		run := func(rows bool) []float32 {
			c := newDenseCaches(m, len(chunks), m.ContextSize())
			b := nn.Batch{}
			for i, ch := range chunks {
				b.Seqs = append(b.Seqs, nn.BatchSeq{Start: len(b.Tokens), Len: len(ch), Pos: pos[i]})
				b.Tokens = append(b.Tokens, ch...)
				b.Logits = append(b.Logits, len(b.Tokens)-1)
			}
			attend := func(layer, i int, q, k, v *tensor.Tensor) *tensor.Tensor {
				p, n := pos[i], q.Size(1)
				kc, vc := c.k[i][layer], c.v[i][layer]
				kc.Slice(1, p, p+n).CopyFrom(k)
				vc.Slice(1, p, p+n).CopyFrom(v)
				return nn.CausalAttention(q.Unsqueeze(0), kc.Slice(1, 0, p+n).Unsqueeze(0), vc.Slice(1, 0, p+n).Unsqueeze(0), p).Squeeze(0)
			}
			calls := 0
			if rows {
				b.Attend = func(layer, i int, q, k, v *tensor.Tensor) *tensor.Tensor {
					t.Fatal("Attend called beside AttendRows")
					return nil
				}
				b.AttendRows = func(layer int, q, k, v *tensor.Tensor) *tensor.Tensor {
					calls++
					var outs []*tensor.Tensor
					for i, s := range b.Seqs {
						run := func(z *tensor.Tensor) *tensor.Tensor { return z.Slice(0, s.Start, s.Start+s.Len).Transpose(0, 1) }
						outs = append(outs, attend(layer, i, run(q), run(k), run(v)).Transpose(0, 1))
					}
					return tensor.Cat(outs, 0)
				}
			} else {
				b.Attend = attend
			}
			out := m.ForwardBatch(&b).Float32s()
			if layers, _, _ := m.KVShape(); rows && calls != layers {
				t.Errorf("%s: AttendRows called %d times, want once per layer (%d)", name, calls, layers)
			}
			return out
		}
		want, got := run(false), run(true)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%s: logit %d is %v through AttendRows, %v through Attend", name, i, got[i], want[i])
			}
		}
	}
}

// TestForwardBatchFused checks GPT's fused CPU step (a batch with
// AttendHost) against the eager one (Attend), bit for bit, over two steps:
// prompts prefilled in chunks beside a decoding sequence, then every
// sequence decoding. The models cover the exact GELU row by row (84
// features) and on whole SIMD blocks (128), GPT-2's approximation, and
// layers with and without biases; Attend is never called.
func TestForwardBatchFused(t *testing.T) {
	models := map[string]*nn.GPT{
		"gpt":      batchModels()["gpt"].(*nn.GPT),
		"gpt2-act": batchModels()["gpt2-act"].(*nn.GPT),
		"blocks":   nn.NewGPTWith(nn.GPTConfig{VocabSize: 41, BlockSize: 24, NLayer: 2, NHead: 4, NEmbd: 32, Bias: true}, tensor.NewGenerator(5)),
	}
	for name, m := range models {
		m.Eval()
		gen := tensor.NewGenerator(6)
		steps := [][][]int{{make([]int, 5), make([]int, 1), make([]int, 7)}, {make([]int, 1), make([]int, 1), make([]int, 1)}}
		for _, chunks := range steps {
			for _, ch := range chunks {
				for j := range ch {
					ch[j] = gen.IntN(m.VocabSize())
				}
			}
		}
		// run steps the model with Attend (eager), or with AttendHost and
		// the fused step's split of the batch at splitFlops
		run := func(fused bool, splitFlops float64) [][]float32 {
			defer nn.SetFusedSplitFlops(splitFlops)()
			c := newDenseCaches(m, 3, m.ContextSize())
			pos := []int{0, 3, 0}
			var outs [][]float32
			for _, chunks := range steps {
				b := nn.Batch{}
				for i, ch := range chunks {
					b.Seqs = append(b.Seqs, nn.BatchSeq{Start: len(b.Tokens), Len: len(ch), Pos: pos[i]})
					b.Tokens = append(b.Tokens, ch...)
					b.Logits = append(b.Logits, len(b.Tokens)-1)
				}
				attend := func(layer, i int, q, k, v *tensor.Tensor) *tensor.Tensor {
					p, n := pos[i], q.Size(1)
					kc, vc := c.k[i][layer], c.v[i][layer]
					kc.Slice(1, p, p+n).CopyFrom(k)
					vc.Slice(1, p, p+n).CopyFrom(v)
					return nn.CausalAttention(q.Unsqueeze(0), kc.Slice(1, 0, p+n).Unsqueeze(0), vc.Slice(1, 0, p+n).Unsqueeze(0), p).Squeeze(0)
				}
				var mu sync.Mutex
				attended := make([][]int, m.Config.NLayer) // per layer, the calls per sequence
				runs := 0                                  // calls for some of the sequences, not all
				if fused {
					b.Attend = func(layer, i int, q, k, v *tensor.Tensor) *tensor.Tensor {
						t.Error("Attend called beside AttendHost")
						return attend(layer, i, q, k, v)
					}
					_, h, d := m.KVShape()
					b.AttendHost = func(layer, lo, hi int, q, k, v, out []float32) {
						mu.Lock()
						if attended[layer] == nil {
							attended[layer] = make([]int, len(b.Seqs))
						}
						for i := lo; i < hi; i++ {
							attended[layer][i]++
						}
						if hi-lo < len(b.Seqs) {
							runs++
						}
						mu.Unlock()
						base := b.Seqs[lo].Start
						for i := lo; i < hi; i++ {
							s := b.Seqs[i]
							run := func(z []float32) *tensor.Tensor {
								return tensor.New(z[(s.Start-base)*h*d:(s.Start-base+s.Len)*h*d], s.Len, h, d).Transpose(0, 1)
							}
							o := attend(layer, i, run(q), run(k), run(v)).Transpose(0, 1).Contiguous().Float32s()
							copy(out[(s.Start-base)*h*d:], o)
						}
					}
				} else {
					b.Attend = attend
				}
				outs = append(outs, m.ForwardBatch(&b).Float32s())
				if fused {
					for l, calls := range attended {
						if calls == nil {
							t.Errorf("%s: layer %d: AttendHost not called", name, l)
						}
						for i, n := range calls {
							if n != 1 {
								t.Errorf("%s: layer %d: AttendHost attended sequence %d %d times, want once", name, l, i, n)
							}
						}
					}
					if split := splitFlops == 0 && parallel.Workers() > 1; split != (runs > 0) {
						t.Errorf("%s: %d AttendHost calls for runs of the batch's sequences; want some: %v", name, runs, split)
					}
				}
				for i, ch := range chunks {
					pos[i] += len(ch)
				}
			}
			return outs
		}
		want := run(false, math.Inf(1))
		for _, split := range []float64{math.Inf(1), 0} { // whole, then split in two runs
			got := run(true, split)
			for s := range want {
				for i := range want[s] {
					if math.Float32bits(got[s][i]) != math.Float32bits(want[s][i]) {
						t.Fatalf("%s, split at %v flops, step %d: logit %d is %v fused, %v eager", name, split, s, i, got[s][i], want[s][i])
					}
				}
			}
		}
	}
}

// TestSampleRow checks SampleRow against SampleNext over random rows,
// temperatures, top-k and top-p (with and without the fast path), rows
// with ties, infinities and a NaN: the same token and the same draws
// from each generator (the next draw after equals too).
func TestSampleRow(t *testing.T) {
	g := tensor.NewGenerator(9)
	inf := float32(math.Inf(1))
	for trial := range 300 {
		n := 1 + g.IntN(80)
		row := g.Randn(n).MulScalar(float32(1 + g.IntN(5))).Float32s()
		switch trial % 10 {
		case 1:
			row[g.IntN(n)] = inf
		case 2:
			row[g.IntN(n)] = -inf
		case 3:
			row[g.IntN(n)] = float32(math.NaN())
		case 4:
			row[g.IntN(n)] = row[0] // a tie
		}
		opts := sampleOptsFor(trial)
		seed := uint64(100 + trial)
		a, b := opts, opts
		a.Generator, b.Generator = tensor.NewGenerator(seed), tensor.NewGenerator(seed)
		keep := append([]float32(nil), row...)
		want, wantErr := catch(func() int { return nn.SampleNext(tensor.New(row, 1, n), a)[0] })
		got, gotErr := catch(func() int { return nn.SampleRow(row, b) })
		if (wantErr == nil) != (gotErr == nil) || got != want {
			t.Fatalf("trial %d (%+v, row %v): SampleRow %d (%v), SampleNext %d (%v)", trial, opts, row, got, gotErr, want, wantErr)
		}
		if x, y := a.Generator.Float64(), b.Generator.Float64(); x != y {
			t.Fatalf("trial %d: the generators differ after sampling", trial)
		}
		for i := range row {
			if math.Float32bits(row[i]) != math.Float32bits(keep[i]) {
				t.Fatalf("trial %d: SampleRow changed the row", trial)
			}
		}
	}
}

// sampleOptsFor returns the trial's sampling options: greedy, plain
// temperatures, top-k and top-p in turn.
func sampleOptsFor(trial int) nn.GenerateOptions {
	o := nn.GenerateOptions{Temperature: []float32{0, 0.7, 1, 1.5, 1, 0.9}[trial%6]}
	switch trial % 7 {
	case 2:
		o.TopK = 3
	case 4:
		o.TopP = 0.8
	}
	return o
}

// catch returns f's result, or the panic it raised.
func catch(f func() int) (v int, err any) {
	defer func() { err = recover() }()
	return f(), nil
}
