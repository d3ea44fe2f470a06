package serve

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wickml/wick/autograd"
	"github.com/wickml/wick/internal/kvcache"
	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
)

// scaled multiplies the model's weights by s (the norms' included): a
// random model with larger weights has sharper distributions, so that its
// greedy answers do not hang on near-ties.
func scaled[M nn.BatchLM](m M, s float32) M {
	autograd.NoGrad(func() {
		for _, p := range m.Parameters() {
			p.CopyFrom(p.MulScalar(s))
		}
	})
	m.Eval()
	return m
}

// tinyGPT is a small GPT with biases.
func tinyGPT() *nn.GPT {
	return scaled(nn.NewGPTWith(nn.GPTConfig{VocabSize: 53, BlockSize: 64, NLayer: 2, NHead: 4, NEmbd: 32, Bias: true}, tensor.NewGenerator(1)), 3)
}

// tinyQwen is a small Qwen3-shaped model: grouped-query attention, q/k
// norms, q/k/v biases, an MLP whose width is not a multiple of 16.
func tinyQwen() *nn.Llama {
	return scaled(nn.NewLlamaWith(nn.LlamaConfig{
		ModelType: "qwen3", VocabSize: 61, HiddenSize: 32, IntermediateSize: 40, NumHiddenLayers: 2,
		NumAttentionHeads: 4, NumKeyValueHeads: 2, HeadDim: 8, MaxPositionEmbeddings: 64,
		RMSNormEps: 1e-6, RopeTheta: 10000, QKVBias: true, QKNorm: true,
	}, tensor.NewGenerator(2)), 3)
}

func newEngine(t testing.TB, cfg Config) *Engine {
	t.Helper()
	e, err := NewEngine(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

// result is what a request's channel carried.
type result struct {
	tokens []int
	final  Event
}

// collect reads ch to its end and checks its form: tokens, then one final
// event, then the channel closed.
func collect(t testing.TB, ch <-chan Event) result {
	t.Helper()
	var r result
	guard := time.After(2 * time.Minute) // a hang guard, not a measurement
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				if r.final.Finish == "" {
					t.Fatalf("channel closed without a final event after %v", r.tokens)
				}
				return r
			}
			switch {
			case r.final.Finish != "":
				t.Fatalf("event %+v after the final %+v", ev, r.final)
			case ev.Finish != "":
				if ev.Token != -1 {
					t.Fatalf("final event %+v: want token -1", ev)
				}
				r.final = ev
			case ev.Token < 0:
				t.Fatalf("event %+v: neither a token nor a final event", ev)
			default:
				r.tokens = append(r.tokens, ev.Token)
			}
		case <-guard:
			t.Fatalf("no end after %v", r.tokens)
		}
	}
}

// run submits r and collects its answer.
func run(t testing.TB, e *Engine, r Request) result {
	t.Helper()
	ch, err := e.Submit(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	return collect(t, ch)
}

// runAll submits every request at once, each from its own goroutine, and
// collects their answers.
func runAll(t *testing.T, e *Engine, reqs []Request) []result {
	t.Helper()
	out := make([]result, len(reqs))
	var wg sync.WaitGroup
	for i, r := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ch, err := e.Submit(context.Background(), r)
			if err != nil {
				t.Error(err)
				return
			}
			out[i] = collect(t, ch)
		}()
	}
	wg.Wait()
	return out
}

func randTokens(r *rand.Rand, n, vocab int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = r.IntN(vocab)
	}
	return s
}

// checkIdle checks that every block went back and no reservation or
// sequence is left.
func checkIdle(t *testing.T, e *Engine) {
	t.Helper()
	a := e.alloc.Stats()
	if a != (kvcache.Stats{Blocks: a.Blocks, Free: a.Blocks}) {
		t.Errorf("allocator after the requests: %+v, want every block free and no sequence", a)
	}
	if s := e.Stats(); s.Running != 0 || s.Waiting != 0 || s.BlocksUsed != 0 {
		t.Errorf("stats after the requests: %+v", s)
	}
}

// tinyLlama is a small Llama 3-shaped model: multi-query attention, tied
// embeddings, Llama 3.1's rotary scaling, no biases or q/k norms.
func tinyLlama() *nn.Llama {
	return scaled(nn.NewLlamaWith(nn.LlamaConfig{
		ModelType: "llama", VocabSize: 47, HiddenSize: 32, IntermediateSize: 48, NumHiddenLayers: 2,
		NumAttentionHeads: 4, NumKeyValueHeads: 1, HeadDim: 8, MaxPositionEmbeddings: 64,
		RMSNormEps: 1e-5, RopeTheta: 500000, TieWordEmbeddings: true,
		RopeScaling: nn.RopeScaling{Type: "llama3", Factor: 8, LowFreqFactor: 1, HighFreqFactor: 4, OriginalMaxPositionEmbeddings: 16},
	}, tensor.NewGenerator(4)), 6)
}

// testModels are the engine tests' models: tinyGPT, tinyQwen, tinyLlama,
// and gpt128, a GPT whose layers are wide enough (786K flops a row) that
// its fused step splits any batch of two sequences or more in two runs
// on goroutines of their own (nn's fusedSplitFlops, 1M).
func testModels() map[string]nn.BatchLM {
	gpt128 := nn.NewGPTWith(nn.GPTConfig{VocabSize: 53, BlockSize: 64, NLayer: 2, NHead: 4, NEmbd: 128, Bias: true}, tensor.NewGenerator(2))
	return map[string]nn.BatchLM{"gpt": tinyGPT(), "gpt128": scaled(gpt128, 3), "qwen3": tinyQwen(), "llama": tinyLlama()}
}

// TestEngineGreedyMatchesGenerate checks the engine's greedy answers,
// for concurrent requests of several prompt lengths (prefilled in chunks
// over several blocks, more requests than the batch holds), against
// nn.Generate's greedy generation of each prompt alone.
func TestEngineGreedyMatchesGenerate(t *testing.T) {
	for name, m := range testModels() {
		t.Run(name, func(t *testing.T) {
			e := newEngine(t, Config{Model: m, MaxBatch: 4, BlockSize: 4, PrefillChunk: 8})
			r := rand.New(rand.NewPCG(3, 4))
			var reqs []Request
			for _, n := range []int{1, 5, 13, 20, 3, 9, 8, 17} {
				reqs = append(reqs, Request{Prompt: randTokens(r, n, m.VocabSize()), MaxTokens: 12})
			}
			for i, got := range runAll(t, e, reqs) {
				p := reqs[i].Prompt
				out, err := nn.Generate(m, tensor.FromInts(p, 1, len(p)), nn.GenerateOptions{MaxNewTokens: 12, IgnoreEOS: true})
				if err != nil {
					t.Fatal(err)
				}
				want := out.Ints()[len(p):]
				if !slices.Equal(got.tokens, want) || got.final.Finish != FinishLength {
					t.Errorf("prompt %v: engine %v (%+v), Generate %v", p, got.tokens, got.final, want)
				}
			}
			checkIdle(t, e)
		})
	}
}

// sampledRequests returns n sampled requests of various lengths and
// sampling fields, each with its own seed.
func sampledRequests(r *rand.Rand, n, vocab int) []Request {
	var reqs []Request
	for i := range n {
		reqs = append(reqs, Request{
			Prompt: randTokens(r, 1+r.IntN(20), vocab), MaxTokens: 4 + r.IntN(14),
			Temperature: []float32{0.7, 1, 1.4}[i%3], TopK: []int{0, 5}[i%2], TopP: []float32{0, 0.9, 1}[i%3],
			Seed: uint64(1000 + i),
		})
	}
	return reqs
}

// logitsLog records, per request channel, the bits of every logits row
// the request sampled from.
type logitsLog struct {
	mu   sync.Mutex
	rows map[<-chan Event][][]uint32
}

func watch(e *Engine) *logitsLog {
	l := &logitsLog{rows: map[<-chan Event][][]uint32{}}
	e.observe = func(s *sequence, row []float32) {
		bits := make([]uint32, len(row))
		for i, v := range row {
			bits[i] = math.Float32bits(v)
		}
		l.mu.Lock()
		l.rows[s.out] = append(l.rows[s.out], bits)
		l.mu.Unlock()
	}
	return l
}

// submitAll submits every request at once, each from its own goroutine,
// and returns their channels in order. e must not have run a request yet:
// its first sampling waits until every request is in, so that they share
// steps even where one processor runs the engine and the submitters in
// turn (GOMAXPROCS=1), when the first request would otherwise finish
// before the second is submitted.
func submitAll(t *testing.T, e *Engine, reqs []Request) []<-chan Event {
	t.Helper()
	in, observe := make(chan struct{}), e.observe
	e.observe = func(s *sequence, logits []float32) {
		<-in
		if observe != nil {
			observe(s, logits)
		}
	}
	defer close(in)
	chs := make([]<-chan Event, len(reqs))
	var wg sync.WaitGroup
	for i, r := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ch, err := e.Submit(context.Background(), r)
			if err != nil {
				t.Error(err)
			}
			chs[i] = ch
		}()
	}
	wg.Wait()
	return chs
}

// TestEngineBatchInvariant checks the batch-invariance guarantee: 32
// concurrent sampled requests, joining a batch of 8 as others leave, each
// give the tokens they give alone on an engine of batch 1, sampled from
// logits of the same bits; with every prefill chunk attending through the
// tensor path, every one on the host, and some each way (the prompts'
// first chunks on the host, the later ones through the tensors).
func TestEngineBatchInvariant(t *testing.T) {
	paths := []struct {
		name      string
		hostChunk int
	}{{"tensor", 0}, {"mixed", 4096}, {"host", hostChunkWide}}
	for name, m := range testModels() {
		for _, path := range paths {
			t.Run(name+"/"+path.name, func(t *testing.T) {
				testBatchInvariant(t, m, path.hostChunk)
			})
		}
	}
}

func testBatchInvariant(t *testing.T, m nn.BatchLM, hostChunk int) {
	reqs := sampledRequests(rand.New(rand.NewPCG(5, 6)), 32, m.VocabSize())
	busy := newEngine(t, Config{Model: m, MaxBatch: 8, BlockSize: 4, PrefillChunk: 8})
	busy.hostChunk = hostChunk
	busyLog := watch(busy)
	// the paths the prompts' chunks of two tokens or more take
	layers, _, _ := m.KVShape()
	_ = layers
	h, d := busy.k[0].Size(2), busy.k[0].Size(3)
	if g, ok := m.(*nn.Llama); ok {
		h, d = g.Config.NumAttentionHeads, g.Config.HeadDim
	}
	var host, tensors int
	for _, r := range reqs {
		for p := 0; p < len(r.Prompt); {
			n := busy.costs.chunk(p, len(r.Prompt))
			switch {
			case n == 1:
			case chunkWork(p, n, h, d) <= hostChunk:
				host++
			default:
				tensors++
			}
			p += n
		}
	}
	t.Logf("prompt chunks: %d on the host, %d through the tensors", host, tensors)
	if hostChunk == 4096 && (host == 0 || tensors == 0) {
		t.Fatalf("prompt chunks: %d on the host, %d through the tensors: want both", host, tensors)
	}
	chs := submitAll(t, busy, reqs)
	got := make([]result, len(chs))
	for i, ch := range chs {
		got[i] = collect(t, ch)
	}
	alone := newEngine(t, Config{Model: m, MaxBatch: 1, BlockSize: 4, PrefillChunk: 8})
	alone.hostChunk = hostChunk
	aloneLog := watch(alone)
	for i, r := range reqs {
		ch, err := alone.Submit(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		want := collect(t, ch)
		if !slices.Equal(got[i].tokens, want.tokens) || got[i].final.Finish != want.final.Finish {
			t.Errorf("request %d: %v (%s) beside others, %v (%s) alone", i, got[i].tokens, got[i].final.Finish, want.tokens, want.final.Finish)
		}
		b, a := busyLog.rows[chs[i]], aloneLog.rows[ch]
		if len(b) != len(a) {
			t.Fatalf("request %d: sampled %d times beside others, %d alone", i, len(b), len(a))
		}
		for s := range a {
			if !slices.Equal(b[s], a[s]) {
				t.Fatalf("request %d: the logits of token %d differ in their bits beside others and alone", i, s)
			}
		}
	}
	s := busy.Stats()
	batched := uint64(0)
	for n, c := range s.BatchSizes[2:] {
		batched += uint64(n+2) * c
	}
	if batched == 0 {
		t.Errorf("no step ran more than one sequence: %+v", s)
	}
	checkIdle(t, busy)
}

// TestEngineJoinLeaveCancel runs requests that arrive at random moments
// over a cache too small for all of them at once, some cancelled before
// they start, some after a few tokens: every block goes back, and every
// request's tokens (as far as they got) are those it gives alone, which
// they would not be if two sequences had shared a block.
func TestEngineJoinLeaveCancel(t *testing.T) {
	m := tinyQwen()
	layers, kvHeads, headDim := m.KVShape()
	block := int64(2 * layers * kvHeads * headDim * 4 * 4)
	e := newEngine(t, Config{Model: m, MaxBatch: 6, BlockSize: 4, PrefillChunk: 8, KVCacheBytes: 24 * block, MaxWaiting: 64})
	r := rand.New(rand.NewPCG(7, 8))
	reqs := sampledRequests(r, 40, m.VocabSize())
	cancelAfter := make([]int, len(reqs)) // -1: never; 0: before submitting
	for i := range cancelAfter {
		cancelAfter[i] = []int{-1, -1, 0, 1, 3}[r.IntN(5)]
	}
	got := make([]result, len(reqs))
	var wg sync.WaitGroup
	for i, req := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if cancelAfter[i] == 0 {
				cancel()
			}
			ch, err := e.Submit(ctx, req)
			if err != nil {
				t.Error(err)
				return
			}
			var res result
			for ev := range ch {
				if ev.Finish != "" {
					res.final = ev
					continue
				}
				res.tokens = append(res.tokens, ev.Token)
				if len(res.tokens) == cancelAfter[i] {
					cancel()
				}
			}
			got[i] = res
		}()
		if r.IntN(3) == 0 {
			time.Sleep(time.Duration(r.IntN(2000)) * time.Microsecond) // vary the join timing
		}
	}
	wg.Wait()
	checkIdle(t, e)
	alone := newEngine(t, Config{Model: m, MaxBatch: 1, BlockSize: 4, PrefillChunk: 8})
	for i, req := range reqs {
		want := run(t, alone, req)
		g := got[i]
		switch {
		case g.final.Finish == FinishCancelled:
			if cancelAfter[i] < 0 || len(g.tokens) > len(want.tokens) || !slices.Equal(g.tokens, want.tokens[:len(g.tokens)]) {
				t.Errorf("request %d (cancel after %d): cancelled with %v, alone %v", i, cancelAfter[i], g.tokens, want.tokens)
			}
		case !slices.Equal(g.tokens, want.tokens) || g.final.Finish != want.final.Finish:
			t.Errorf("request %d (cancel after %d): %v (%s), alone %v (%s)", i, cancelAfter[i], g.tokens, g.final.Finish, want.tokens, want.final.Finish)
		}
	}
}

// gated is a model whose steps wait for a permit and announce themselves
// (when entered is not nil), so that a test can hold the engine in a step.
type gated struct {
	nn.BatchLM
	permits chan struct{}
	entered chan struct{}
}

func newGated(m nn.BatchLM) *gated {
	return &gated{BatchLM: m, permits: make(chan struct{}), entered: make(chan struct{}, 1000)}
}

func (g *gated) ForwardBatch(b *nn.Batch) *tensor.Tensor {
	g.entered <- struct{}{}
	<-g.permits
	return g.BatchLM.ForwardBatch(b)
}

// TestEngineIdleAfterAnswer checks that a client who has read its final
// event finds its request no longer counted (none running, no blocks in
// use) while the engine has not yet taken its next turn: the engine is
// held after each step until the test has looked.
func TestEngineIdleAfterAnswer(t *testing.T) {
	e := newEngine(t, Config{Model: tinyGPT(), MaxBatch: 2, BlockSize: 4})
	held, release := make(chan struct{}), make(chan struct{})
	e.stepped = func() {
		held <- struct{}{}
		<-release
	}
	for _, n := range []int{1, 2, 5} {
		ch, err := e.Submit(context.Background(), Request{Prompt: []int{1, 2, 3}, MaxTokens: n})
		if err != nil {
			t.Fatal(err)
		}
		for step := range n { // one step for the prompt and its first token, one per token after
			<-held
			if step < n-1 {
				release <- struct{}{}
			}
		}
		res := collect(t, ch)
		if len(res.tokens) != n {
			t.Fatalf("max_tokens %d: %d tokens", n, len(res.tokens))
		}
		if s := e.Stats(); s.Running != 0 || s.Waiting != 0 || s.BlocksUsed != 0 {
			t.Errorf("max_tokens %d: stats after the answer, before the engine's next turn: %+v", n, s)
		}
		release <- struct{}{}
	}
}

// TestEngineCancelFreesBlocks checks that a request cancelled mid-answer
// ends with FinishCancelled after the step that was running, and that its
// blocks are free by the time its final event arrives.
func TestEngineCancelFreesBlocks(t *testing.T) {
	g := newGated(tinyGPT())
	e := newEngine(t, Config{Model: g, BlockSize: 4})
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := e.Submit(ctx, Request{Prompt: []int{1, 2, 3, 4, 5, 6}, MaxTokens: 40})
	if err != nil {
		t.Fatal(err)
	}
	g.permits <- struct{}{} // the prefill
	if ev := <-ch; ev.Token < 0 {
		t.Fatalf("first event %+v", ev)
	}
	<-g.entered
	<-g.entered // the second step waits for its permit
	if s := e.Stats(); s.BlocksUsed != 2 || s.Running != 1 || e.alloc.Stats().InUse != 12 {
		t.Errorf("stats while running: %+v, allocator %+v; want 2 blocks holding the 6 positions of 4 and one sequence, 12 blocks taken (6+40-1 positions)", s, e.alloc.Stats())
	}
	cancel()
	close(g.permits)
	res := collect(t, ch)
	if res.final.Finish != FinishCancelled || len(res.tokens) != 1 {
		t.Errorf("after cancelling: %v then %+v, want one more token then cancelled", res.tokens, res.final)
	}
	checkIdle(t, e)
}

// TestEngineFull checks ErrFull once MaxWaiting requests wait, and the
// waiting and running counts.
func TestEngineFull(t *testing.T) {
	g := newGated(tinyGPT())
	e := newEngine(t, Config{Model: g, MaxBatch: 1, MaxWaiting: 2})
	req := Request{Prompt: []int{1, 2}, MaxTokens: 3}
	var chs []<-chan Event
	for i := range 3 {
		ch, err := e.Submit(context.Background(), req)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		chs = append(chs, ch)
		if i == 0 {
			<-g.entered // running, held in its first step
		}
	}
	if _, err := e.Submit(context.Background(), req); !errors.Is(err, ErrFull) {
		t.Errorf("fourth request: %v, want ErrFull", err)
	}
	if s := e.Stats(); s.Running != 1 || s.Waiting != 2 {
		t.Errorf("stats: %+v, want 1 running and 2 waiting", s)
	}
	close(g.permits)
	for _, ch := range chs {
		if res := collect(t, ch); len(res.tokens) != 3 || res.final.Finish != FinishLength {
			t.Errorf("answer %v %+v", res.tokens, res.final)
		}
	}
	s := e.Stats()
	if s.Steps != 9 || s.BatchSizes[1] != 9 || s.GeneratedTokens != 9 || s.PromptTokens != 6 {
		t.Errorf("counters: %+v, want 9 steps of one sequence, 9 tokens generated, 6 prefilled", s)
	}
	checkIdle(t, e)
}

// TestEngineRequestErrors checks the requests that can never run.
func TestEngineRequestErrors(t *testing.T) {
	m := tinyGPT() // context 64, vocabulary 53
	layers, kvHeads, headDim := m.KVShape()
	e := newEngine(t, Config{Model: m, BlockSize: 4, KVCacheBytes: int64(10 * 2 * layers * kvHeads * headDim * 4 * 4)}) // 40 positions
	for _, c := range []struct {
		r     Request
		field string
	}{
		{Request{MaxTokens: 1}, "prompt"},
		{Request{Prompt: []int{1, 53}, MaxTokens: 1}, "prompt"},
		{Request{Prompt: []int{-1}, MaxTokens: 1}, "prompt"},
		{Request{Prompt: []int{1}}, "max_tokens"},
		{Request{Prompt: []int{1}, MaxTokens: 1, Temperature: -1}, "temperature"},
		{Request{Prompt: []int{1}, MaxTokens: 1, Temperature: float32(math.NaN())}, "temperature"},
		{Request{Prompt: []int{1}, MaxTokens: 1, Temperature: 1e-9}, "temperature"},
		{Request{Prompt: []int{1}, MaxTokens: 1, TopK: -2}, "top_k"},
		{Request{Prompt: []int{1}, MaxTokens: 1, TopP: 1.5}, "top_p"},
		{Request{Prompt: []int{1}, MaxTokens: 1, TopP: float32(math.NaN())}, "top_p"},
		{Request{Prompt: []int{1}, MaxTokens: math.MaxInt}, "max_tokens"},
		{Request{Prompt: make([]int, 60), MaxTokens: 5}, "max_tokens"},  // over the context
		{Request{Prompt: make([]int, 30), MaxTokens: 11}, "max_tokens"}, // over the cache
	} {
		_, err := e.Submit(context.Background(), c.r)
		var re *RequestError
		if !errors.As(err, &re) || re.Field != c.field {
			t.Errorf("%+v: %v, want a RequestError on %s", c.r, err, c.field)
		}
	}
	if res := run(t, e, Request{Prompt: make([]int, 30), MaxTokens: 10}); len(res.tokens) != 10 {
		t.Errorf("a request that fills the cache: %v %+v", res.tokens, res.final)
	}
	ch, err := e.Submit(nil, Request{Prompt: []int{1}, MaxTokens: 2}) // documented to mean Background
	if err != nil {
		t.Fatal(err)
	}
	if res := collect(t, ch); len(res.tokens) != 2 {
		t.Errorf("a request with a nil context: %v %+v", res.tokens, res.final)
	}
}

// TestEngineStop checks that a stop token ends the request unsent.
func TestEngineStop(t *testing.T) {
	m := tinyGPT()
	e := newEngine(t, Config{Model: m})
	req := Request{Prompt: []int{4, 8, 15, 16}, MaxTokens: 10}
	full := run(t, e, req)
	req.StopIDs = []int{full.tokens[3]}
	k := slices.Index(full.tokens, full.tokens[3])
	if res := run(t, e, req); !slices.Equal(res.tokens, full.tokens[:k]) || res.final.Finish != FinishStop {
		t.Errorf("stop at %d: %v %+v, want %v then stop", full.tokens[3], res.tokens, res.final, full.tokens[:k])
	}
}

// TestEngineShutdown checks that Shutdown under load answers every
// request in flight, running or waiting, refuses new ones, and that a
// Shutdown past its deadline cancels what is left.
func TestEngineShutdown(t *testing.T) {
	m := tinyQwen()
	e := newEngine(t, Config{Model: m, MaxBatch: 4, BlockSize: 4})
	r := rand.New(rand.NewPCG(9, 10))
	var chs []<-chan Event
	for range 12 {
		ch, err := e.Submit(context.Background(), Request{Prompt: randTokens(r, 5, m.VocabSize()), MaxTokens: 8, Temperature: 1, Seed: r.Uint64()})
		if err != nil {
			t.Fatal(err)
		}
		chs = append(chs, ch)
	}
	if err := e.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i, ch := range chs {
		if res := collect(t, ch); len(res.tokens) != 8 || res.final.Finish != FinishLength {
			t.Errorf("request %d after Shutdown: %v %+v", i, res.tokens, res.final)
		}
	}
	if _, err := e.Submit(context.Background(), Request{Prompt: []int{1}, MaxTokens: 1}); !errors.Is(err, ErrClosed) {
		t.Errorf("Submit after Shutdown: %v, want ErrClosed", err)
	}
	checkIdle(t, e)

	g := newGated(tinyGPT())
	e = newEngine(t, Config{Model: g})
	ch, err := e.Submit(context.Background(), Request{Prompt: []int{1, 2}, MaxTokens: 50})
	if err != nil {
		t.Fatal(err)
	}
	<-g.entered
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	done := make(chan error)
	go func() { done <- e.Shutdown(ctx) }()
	for {
		e.mu.Lock()
		abort := e.abort
		e.mu.Unlock()
		if abort {
			break
		}
		time.Sleep(time.Millisecond)
	}
	close(g.permits)
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Shutdown past its deadline: %v", err)
	}
	if res := collect(t, ch); res.final.Finish != FinishCancelled || len(res.tokens) != 1 {
		t.Errorf("request after an expired Shutdown: %v %+v, want one token then cancelled", res.tokens, res.final)
	}
	checkIdle(t, e)
}

// TestEngineNonFinite checks that a model with a NaN weight ends its
// requests with FinishError and a clear error, freeing their blocks.
func TestEngineNonFinite(t *testing.T) {
	m := tinyQwen()
	autograd.NoGrad(func() { m.Layers[1].MLP.DownProj.Weight.Fill_(float32(math.NaN())) })
	e := newEngine(t, Config{Model: m})
	res := run(t, e, Request{Prompt: []int{1, 2, 3}, MaxTokens: 5})
	if res.final.Finish != FinishError || !errors.Is(res.final.Err, errNonFinite) || len(res.tokens) != 0 {
		t.Errorf("NaN model: %v %+v", res.tokens, res.final)
	}
	checkIdle(t, e)
}

// panicky panics in its first step.
type panicky struct {
	nn.BatchLM
	once sync.Once
}

func (p *panicky) ForwardBatch(b *nn.Batch) *tensor.Tensor {
	p.once.Do(func() { panic("a broken kernel") })
	return p.BatchLM.ForwardBatch(b)
}

// short returns no logits in its first step: the step then fails after
// the forward pass, taking the rows it lacks.
type short struct {
	nn.BatchLM
	once sync.Once
}

func (p *short) ForwardBatch(b *nn.Batch) *tensor.Tensor {
	out := p.BatchLM.ForwardBatch(b)
	p.once.Do(func() { out = out.Slice(0, 0, 0) })
	return out
}

// TestEnginePanicRecovered checks that a panic in a step, in the model or
// after it, ends that step's requests with FinishError and leaves the
// engine serving.
func TestEnginePanicRecovered(t *testing.T) {
	m := tinyGPT()
	for name, c := range map[string]struct {
		model nn.BatchLM
		msg   string
	}{"in the model": {&panicky{BatchLM: m}, "a broken kernel"}, "after the model": {&short{BatchLM: m}, "step failed"}} {
		e := newEngine(t, Config{Model: c.model})
		req := Request{Prompt: []int{1, 2, 3}, MaxTokens: 4}
		res := run(t, e, req)
		if res.final.Finish != FinishError || res.final.Err == nil || !strings.Contains(res.final.Err.Error(), c.msg) {
			t.Errorf("%s: the failing step: %v %+v", name, res.tokens, res.final)
		}
		res = run(t, e, req)
		want, _ := nn.Generate(m, tensor.FromInts(req.Prompt, 1, 3), nn.GenerateOptions{MaxNewTokens: 4, IgnoreEOS: true})
		if !slices.Equal(res.tokens, want.Ints()[3:]) || res.final.Finish != FinishLength {
			t.Errorf("%s: after the panic: %v %+v, want %v", name, res.tokens, res.final, want.Ints()[3:])
		}
		checkIdle(t, e)
	}
}

// TestNewEngineErrors checks NewEngine's refusals.
func TestNewEngineErrors(t *testing.T) {
	if _, err := NewEngine(Config{}); err == nil {
		t.Error("no model: no error")
	}
	if _, err := NewEngine(Config{Model: tinyGPT(), MaxBatch: -1}); err == nil {
		t.Error("negative MaxBatch: no error")
	}
	if _, err := NewEngine(Config{Model: tinyGPT(), KVCacheBytes: 100}); err == nil {
		t.Error("a cache smaller than a block: no error")
	}
}

// BenchmarkEngine measures generated tokens per second of wall time with
// 1 and 16 clients, each sending requests one after another (a 16-token
// prompt, 32 greedy tokens) to one engine: the speed-up of batching, which
// reads every weight once per step for all the running sequences. The
// models are random, of four shapes: a small GPT (4 layers of 256),
// GPT-2 124M's, and a Qwen3-0.6B-shaped Llama with its 152K vocabulary
// (2.4 GB of float32 weights), and the CPU recipe's (4 layers of 128, 65
// characters, context 64); pick one with -bench 'Engine/gpt2'.
func BenchmarkEngine(b *testing.B) {
	shapes := []struct {
		name  string
		model func() nn.BatchLM
	}{
		{"recipe", func() nn.BatchLM { // the CPU recipe's model: 4 layers of 128 over 65 characters
			return nn.NewGPTWith(nn.GPTConfig{VocabSize: 65, BlockSize: 64, NLayer: 4, NHead: 4, NEmbd: 128}, tensor.NewGenerator(1))
		}},
		{"small", func() nn.BatchLM {
			return nn.NewGPTWith(nn.GPTConfig{VocabSize: 4096, BlockSize: 256, NLayer: 4, NHead: 4, NEmbd: 256}, tensor.NewGenerator(1))
		}},
		{"gpt2", func() nn.BatchLM {
			return nn.NewGPTWith(nn.GPTConfig{VocabSize: 50257, BlockSize: 1024, NLayer: 12, NHead: 12, NEmbd: 768, Activation: nn.ActGELUTanh}, tensor.NewGenerator(1))
		}},
		{"qwen3", func() nn.BatchLM {
			return nn.NewLlamaWith(nn.LlamaConfig{
				ModelType: "qwen3", VocabSize: 151936, HiddenSize: 1024, IntermediateSize: 3072, NumHiddenLayers: 28,
				NumAttentionHeads: 16, NumKeyValueHeads: 8, HeadDim: 128, MaxPositionEmbeddings: 4096,
				RMSNormEps: 1e-6, RopeTheta: 1000000, QKNorm: true, TieWordEmbeddings: true,
			}, tensor.NewGenerator(1))
		}},
	}
	for _, shape := range shapes {
		b.Run(shape.name, func(b *testing.B) {
			m := shape.model()
			m.Eval()
			for _, clients := range []int{1, 16} {
				b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
					e := newEngine(b, Config{Model: m, MaxBatch: 16, KVCacheBytes: 256 << 20})
					prompt := make([]int, 16)
					for i := range prompt {
						prompt[i] = i * 7 % m.VocabSize()
					}
					b.ResetTimer()
					start := time.Now()
					var wg sync.WaitGroup
					for c := range clients {
						wg.Add(1)
						go func() {
							defer wg.Done()
							for range b.N {
								ch, err := e.Submit(context.Background(), Request{Prompt: prompt, MaxTokens: 32, Seed: uint64(c)})
								if err != nil {
									b.Error(err)
									return
								}
								for range ch {
								}
							}
						}()
					}
					wg.Wait()
					b.ReportMetric(float64(clients*b.N*32)/time.Since(start).Seconds(), "tokens/s")
				})
			}
		})
	}
}

// recorder notes the runs of every step's batch.
type recorder struct {
	nn.BatchLM
	mu    sync.Mutex
	steps [][]nn.BatchSeq
}

func (r *recorder) ForwardBatch(b *nn.Batch) *tensor.Tensor {
	r.mu.Lock()
	r.steps = append(r.steps, slices.Clone(b.Seqs))
	r.mu.Unlock()
	return r.BatchLM.ForwardBatch(b)
}

// TestEngineChunkedPrefill checks the scheduling promise of chunked
// prefill: while long prompts are read, every step still advances the
// decoding sequence by one token and carries prompt chunks of one chunk's
// cost at most in all, each prompt cut where the chunk plan cuts it.
func TestEngineChunkedPrefill(t *testing.T) {
	rec := &recorder{BatchLM: tinyQwen()}
	e := newEngine(t, Config{Model: rec, MaxBatch: 8, BlockSize: 4, PrefillChunk: 8})
	lengths := []int{29, 18, 8}
	want := 1 // the first request's 3 tokens
	plan := map[[2]int]bool{{0, 3}: true}
	for _, n := range lengths {
		for p := 0; p < n; {
			c := e.costs.chunk(p, n)
			if c == 1 {
				t.Fatalf("the plan of a %d-token prompt has a chunk of one token at %d: the test cannot tell it from a decode", n, p)
			}
			plan[[2]int{p, c}] = true
			p += c
			want++
		}
	}
	r := rand.New(rand.NewPCG(11, 12))
	ch, err := e.Submit(context.Background(), Request{Prompt: randTokens(r, 3, rec.VocabSize()), MaxTokens: 30})
	if err != nil {
		t.Fatal(err)
	}
	<-ch // decoding
	var longs []<-chan Event
	for _, n := range lengths {
		c, err := e.Submit(context.Background(), Request{Prompt: randTokens(r, n, rec.VocabSize()), MaxTokens: 2})
		if err != nil {
			t.Fatal(err)
		}
		longs = append(longs, c)
	}
	for _, c := range longs {
		collect(t, c)
	}
	collect(t, ch)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	chunks := 0
	for i, seqs := range rec.steps {
		cost, n, short := 0.0, 0, false
		for _, s := range seqs {
			switch {
			case s.Len > 1 && !plan[[2]int{s.Pos, s.Len}]:
				t.Errorf("step %d: a chunk of %d at position %d, not one of the plan's", i, s.Len, s.Pos)
			case s.Len > 1:
				// the cost without the head's row: the test does not know
				// which prompt it ends, and its budget check is loose so
				cost += e.costs.cost(s.Pos, s.Len, false)
				n++
				chunks++
			case s.Pos == 2+i: // the first request's token of step i
				short = true
			}
		}
		if n > 1 && cost > e.costs.budget {
			t.Errorf("step %d read prompt chunks of cost %v, over the budget %v: %v", i, cost, e.costs.budget, seqs)
		}
		if i >= 1 && i < 30 && !short {
			t.Errorf("step %d did not advance the decoding sequence: %v", i, seqs)
		}
	}
	if chunks != want {
		t.Errorf("%d prompt chunks, want %d", chunks, want)
	}
}

// TestChunkPlan checks the chunk plan of a long prompt on a model shaped
// as the Qwen3 of the benchmarks (hidden 256, 4 layers, 152K vocabulary):
// chunks of PrefillChunk tokens first, shorter ones where attention over
// the positions before grows, the last shortened for the head's row, each
// within the budget, covering the prompt.
func TestChunkPlan(t *testing.T) {
	c := costModel{perRow: 3.1e6, perKey: 2048, head: 39e6, maxRows: 64}
	c.budget = c.cost(0, 64, true)
	var cuts []int
	for p := 0; p < 1024; {
		n := c.chunk(p, 1024)
		if n < 1 || n > 64 || c.cost(p, n, p+n == 1024) > c.budget {
			t.Fatalf("chunk of %d at %d: want 1 to 64 tokens within the budget", n, p)
		}
		cuts = append(cuts, n)
		p += n
	}
	if cuts[0] != 64 || cuts[len(cuts)-2] >= 50 || cuts[len(cuts)-1] >= cuts[len(cuts)-2] {
		t.Errorf("chunks %v: want 64 first, then shorter ones, the last shortest", cuts)
	}
	if n := c.chunk(0, 5); n != 5 {
		t.Errorf("a 5-token prompt is cut at %d, want one chunk", n)
	}
}

// TestEngineSamplingFailureIsPerRequest checks that a request whose
// sampling fails (logits of ~1e36 divided by temperature 1e-3 overflow
// float32) ends alone with FinishError, while a greedy request in the
// same steps gets the answer it gets alone.
func TestEngineSamplingFailureIsPerRequest(t *testing.T) {
	m := tinyGPT()
	m.LnF.Weight.Detach().CopyFrom(tensor.Full(1e37, m.LnF.Weight.Shape()...))
	greedy := Request{Prompt: []int{1, 2, 3}, MaxTokens: 6}
	alone := run(t, newEngine(t, Config{Model: m}), greedy)
	if alone.final.Finish != FinishLength || len(alone.tokens) != 6 {
		t.Fatalf("greedy request alone: %v %+v", alone.tokens, alone.final)
	}

	g := newGated(m)
	e := newEngine(t, Config{Model: g, MaxBatch: 2})
	chA, err := e.Submit(context.Background(), greedy)
	if err != nil {
		t.Fatal(err)
	}
	<-g.entered // A's prefill runs alone; B joins the next step
	chB, err := e.Submit(context.Background(), Request{Prompt: []int{4, 5}, MaxTokens: 6, Temperature: 1e-3, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for e.Stats().Waiting != 1 {
		time.Sleep(time.Millisecond)
	}
	close(g.permits)
	a, b := collect(t, chA), collect(t, chB)
	if b.final.Finish != FinishError || b.final.Err == nil || !strings.Contains(b.final.Err.Error(), "finite") {
		t.Errorf("request at temperature 1e-3: %v %+v, want FinishError saying the logits are not finite", b.tokens, b.final)
	}
	if !slices.Equal(a.tokens, alone.tokens) || a.final.Finish != FinishLength {
		t.Errorf("greedy request beside a failing one: %v %+v, want %v as alone", a.tokens, a.final, alone.tokens)
	}
	checkIdle(t, e)
}
