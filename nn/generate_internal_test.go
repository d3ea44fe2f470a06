package nn

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/wickml/wick/tensor"

	"github.com/wickml/wick/internal/approx"
)

// genCase is one Generate call compared with and without the cache.
type genCase struct {
	prompt []int // B·T tokens
	b      int
	maxNew int
	temp   float32
	topK   int
	seed   uint64
}

// run generates c on m, with the cache or recomputing the whole context
// for every token, and returns the tokens and each step's logits.
func (c genCase) run(t *testing.T, m *GPT, recompute bool) ([]int, [][]float32) {
	t.Helper()
	var logits [][]float32
	idx := tensor.FromInts(c.prompt, c.b, len(c.prompt)/c.b)
	out := m.generate(idx, c.maxNew, c.temp, c.topK, tensor.NewGenerator(c.seed), recompute, func(l *tensor.Tensor) {
		if l.GradFn() != nil || l.IsRequiringGrad() {
			t.Errorf("step logits were recorded on the tape (grad_fn %v)", l.GradFn())
		}
		logits = append(logits, l.Float32s())
	}, nil)
	return out.Ints(), logits
}

// logitsClose reports whether got is within 1e-5 of want relative to
// want's largest magnitude (an absolute tolerance of 1e-5·max|want|).
func logitsClose(got, want []float32) bool {
	var m float64
	for _, v := range want {
		m = max(m, math.Abs(float64(v)))
	}
	return approx.Index(got, want, 0, 1e-5*m) < 0
}

// checkCached compares c's cached generation with the recomputed one:
// the same tokens, and logits within 1e-5 relative at every step.
func checkCached(t *testing.T, m *GPT, c genCase) {
	t.Helper()
	wantToks, wantLogits := c.run(t, m, true)
	gotToks, gotLogits := c.run(t, m, false)
	if !slices.Equal(gotToks, wantToks) {
		t.Errorf("cached tokens %v\nwant recomputed  %v", gotToks, wantToks)
	}
	if len(gotLogits) != len(wantLogits) {
		t.Fatalf("%d steps observed, want %d", len(gotLogits), len(wantLogits))
	}
	for s := range wantLogits {
		if !logitsClose(gotLogits[s], wantLogits[s]) {
			t.Errorf("step %d (context %d): logits differ by more than 1e-5 of the largest", s, len(c.prompt)/c.b+s)
		}
	}
}

func randomTokens(gen *tensor.Generator, n, vocab int) []int {
	toks := make([]int, n)
	for i := range toks {
		toks[i] = gen.IntN(vocab)
	}
	return toks
}

func testModel(seed uint64, bias bool, act Activation) *GPT {
	m := NewGPTWith(GPTConfig{VocabSize: 37, BlockSize: 8, NLayer: 2, NHead: 2, NEmbd: 16, Bias: bias, Activation: act}, tensor.NewGenerator(seed))
	m.Eval()
	return m
}

// TestGenerateCacheMatchesRecompute generates with the cache and by
// recomputing the context for every token, on random models, for prompts
// shorter than, as long as and longer than the block, with generations
// that cross it (with and without biases, exact GELU and GPT-2's): the
// tokens must be the same and every step's logits within 1e-5 relative.
func TestGenerateCacheMatchesRecompute(t *testing.T) {
	gen := tensor.NewGenerator(5)
	for _, mc := range []struct {
		bias bool
		act  Activation
	}{{true, ActGELU}, {false, ActGELUTanh}} {
		bias := mc.bias
		for seed := range uint64(3) {
			m := testModel(seed, bias, mc.act)
			for _, plen := range []int{1, 3, 8, 11} {
				for _, s := range []struct {
					temp float32
					topK int
				}{{1, 0}, {0.7, 5}, {1.5, 0}, {1, 1}, {0.01, 0}, {0, 0}} {
					c := genCase{prompt: randomTokens(gen, plen, 37), b: 1, maxNew: 12, temp: s.temp, topK: s.topK, seed: 40 + seed}
					t.Run(fmt.Sprintf("bias=%v/act=%q/model=%d/prompt=%d/temp=%v/topk=%d", bias, mc.act, seed, plen, s.temp, s.topK), func(t *testing.T) {
						checkCached(t, m, c)
					})
				}
			}
		}
	}
}

// TestGenerateCacheBatch generates for a batch of three equal-length
// prompts with the cache and by recomputation; greedily (top_k 1), each
// row must also be what that prompt generates alone.
func TestGenerateCacheBatch(t *testing.T) {
	m := testModel(7, true, ActGELU)
	gen := tensor.NewGenerator(9)
	for _, plen := range []int{2, 8, 10} {
		prompt := randomTokens(gen, 3*plen, 37)
		checkCached(t, m, genCase{prompt: prompt, b: 3, maxNew: 10, temp: 0.8, topK: 0, seed: 3})
		greedy := genCase{prompt: prompt, b: 3, maxNew: 10, temp: 1, topK: 1, seed: 3}
		checkCached(t, m, greedy)
		all, _ := greedy.run(t, m, false)
		n := plen + greedy.maxNew
		for r := range 3 {
			alone := greedy
			alone.prompt, alone.b = prompt[r*plen:(r+1)*plen], 1
			got, _ := alone.run(t, m, false)
			if !slices.Equal(all[r*n:(r+1)*n], got) {
				t.Errorf("prompt length %d: row %d of the batch generated %v, alone %v", plen, r, all[r*n:(r+1)*n], got)
			}
		}
	}
}

// TestGenerateCacheChunked checks the cached attention with several new
// positions after cached ones (the causal mask offset by the cache),
// against Forward on the whole context.
func TestGenerateCacheChunked(t *testing.T) {
	m := testModel(11, true, ActGELUTanh)
	cfg := m.Config
	gen := tensor.NewGenerator(2)
	toks := randomTokens(gen, 2*cfg.BlockSize, cfg.VocabSize)
	idx := tensor.FromInts(toks, 2, cfg.BlockSize)
	want := m.Forward(idx)
	for _, split := range []int{1, 3, 7} {
		c := m.NewKVCache(2, cfg.BlockSize)
		m.forwardCached(idx.Slice(1, 0, split), c)
		got := m.LmHead.Forward(m.forwardCached(idx.Slice(1, split, cfg.BlockSize), c))
		w := want.Slice(1, cfg.BlockSize-1, cfg.BlockSize)
		for r := range 2 {
			g, wr := got.Select(0, r).Float32s(), w.Select(0, r).Float32s()
			if !logitsClose(g, wr) {
				t.Errorf("split at %d, row %d: last logits differ by more than 1e-5 of the largest", split, r)
			}
		}
	}
}

// TestGenerateCacheConcurrent generates on one shared model from 8
// goroutines at once (run it under -race): each must return what it
// returns when the calls run one after the other.
func TestGenerateCacheConcurrent(t *testing.T) {
	m := testModel(3, true, ActGELU)
	gen := tensor.NewGenerator(4)
	cases := make([]genCase, 8)
	want := make([][]int, len(cases))
	for i := range cases {
		cases[i] = genCase{prompt: randomTokens(gen, 2*(1+i), 37), b: 2, maxNew: 9, temp: 0.9, topK: 4 * (i % 2), seed: uint64(i)}
		want[i], _ = cases[i].run(t, m, false)
	}
	got := make([][]int, len(cases))
	var wg sync.WaitGroup
	for i := range cases {
		wg.Go(func() { got[i], _ = cases[i].run(t, m, false) })
	}
	wg.Wait()
	for i := range cases {
		if !slices.Equal(got[i], want[i]) {
			t.Errorf("goroutine %d generated %v, alone %v", i, got[i], want[i])
		}
	}
}

// TestGenerateContext: a live context gives GenerateWith's tokens; a
// context that is done stops between tokens with ctx.Err() and the rows
// as far as they got.
func TestGenerateContext(t *testing.T) {
	m := NewGPTWith(GPTConfig{VocabSize: 11, BlockSize: 8, NLayer: 1, NHead: 2, NEmbd: 16}, tensor.NewGenerator(3))
	m.Eval()
	prompt := tensor.FromInts([]int{1, 2, 3}, 1, 3)
	want := m.GenerateWith(prompt, 12, 1, 0, tensor.NewGenerator(9)).Ints()
	got, err := m.GenerateContext(context.Background(), prompt, 12, 1, 0, tensor.NewGenerator(9))
	if err != nil || !slices.Equal(got.Ints(), want) {
		t.Fatalf("GenerateContext with a live context: %v, %v; want %v, nil", got.Ints(), err, want)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	stopAfter := func(*tensor.Tensor) {
		if n++; n == 4 {
			cancel()
		}
	}
	stopped := m.generate(prompt, 12, 1, 0, tensor.NewGenerator(9), false, stopAfter, func() bool { return ctx.Err() != nil })
	if !slices.Equal(stopped.Ints(), want[:3+4]) {
		t.Errorf("cancelled after 4 tokens: %v, want %v", stopped.Ints(), want[:7])
	}
	done, err := m.GenerateContext(ctx, prompt, 12, 1, 0, tensor.NewGenerator(9))
	if err != context.Canceled || done.Size(1) != 3 {
		t.Errorf("GenerateContext with a cancelled context: shape %v, err %v; want the prompt and context.Canceled", done.Shape(), err)
	}
}

// TestGenerateGreedy: temperature 0 is greedy decoding. Each new token is
// the first largest logit of its step (whatever topK), the tokens are those
// of topK 1, in Generate, GenerateWith and GenerateContext, with the cache
// and recomputing, for prompts that cross the block; and no number is drawn
// from the generator.
func TestGenerateGreedy(t *testing.T) {
	gen := tensor.NewGenerator(11)
	for seed := range uint64(2) {
		m := testModel(seed, seed == 0, ActGELU)
		for _, plen := range []int{1, 5, 10} {
			prompt := randomTokens(gen, 2*plen, 37)
			idx := func() *tensor.Tensor { return tensor.FromInts(prompt, 2, plen) }
			const maxNew = 9
			want := m.GenerateWith(idx(), maxNew, 1, 1, tensor.NewGenerator(3)).Ints()
			g := tensor.NewGenerator(4)
			before := g.State()
			for _, topK := range []int{0, 1, 5} {
				for _, recompute := range []bool{false, true} {
					step := 0
					out := m.generate(idx(), maxNew, 0, topK, g, recompute, func(l *tensor.Tensor) {
						rows := l.Float32s()
						n := l.Size(1)
						for b := range 2 {
							row := rows[b*n : (b+1)*n]
							best := 0
							for j, v := range row {
								if v > row[best] {
									best = j
								}
							}
							if got := want[b*(plen+maxNew)+plen+step]; got != best {
								t.Errorf("model %d, prompt %d, top_k %d: row %d step %d is token %d, want the argmax %d", seed, plen, topK, b, step, got, best)
							}
						}
						step++
					}, nil).Ints()
					if !slices.Equal(out, want) {
						t.Errorf("model %d, prompt %d, top_k %d, recompute %v: temperature 0 gives %v, top_k 1 %v", seed, plen, topK, recompute, out, want)
					}
				}
			}
			if got := m.Generate(idx(), maxNew, 0, 0).Ints(); !slices.Equal(got, want) {
				t.Errorf("Generate at temperature 0: %v, want %v", got, want)
			}
			got, err := m.GenerateContext(context.Background(), idx(), maxNew, 0, 0, g)
			if err != nil || !slices.Equal(got.Ints(), want) {
				t.Errorf("GenerateContext at temperature 0: %v (%v), want %v", got.Ints(), err, want)
			}
			if !slices.Equal(g.State(), before) {
				t.Error("greedy decoding drew from the generator")
			}
		}
	}
	for _, bad := range []float32{-1, float32(math.NaN())} {
		if err := tensor.Catch(func() { testModel(0, true, ActGELU).Generate(tensor.FromInts([]int{1}, 1, 1), 1, bad, 0) }); err == nil {
			t.Errorf("temperature %v: no panic", bad)
		}
	}
}
