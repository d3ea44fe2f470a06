package nn_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
	"github.com/wickml/wick/tokenizer"
)

func tinyLlamaConfig() nn.LlamaConfig {
	return nn.LlamaConfig{
		ModelType: "qwen3", VocabSize: 29, HiddenSize: 16, IntermediateSize: 24, NumHiddenLayers: 2,
		NumAttentionHeads: 4, NumKeyValueHeads: 2, HeadDim: 6, MaxPositionEmbeddings: 12,
		RMSNormEps: 1e-6, RopeTheta: 10000, QKVBias: true, QKNorm: true, EOSTokenIDs: []int{3},
	}
}

// TestCausalAttentionOffset checks that queries at an offset attend as
// the same rows of the full attention do, for MHA, GQA and MQA.
func TestCausalAttentionOffset(t *testing.T) {
	gen := tensor.NewGenerator(3)
	for _, hkv := range []int{4, 2, 1} {
		q := gen.Randn(2, 4, 7, 6)
		k, v := gen.Randn(2, hkv, 7, 6), gen.Randn(2, hkv, 7, 6)
		full := nn.CausalAttention(q, k, v, 0)
		if hkv == 4 {
			ref := tensor.ScaledDotProductAttention(q, k, v, true)
			// the fused kernels' softmax rounds unlike the composition's
			if d := maxDiff(t, "sdpa", full, ref); d > 1e-6 {
				t.Errorf("offset 0 differs from tensor.ScaledDotProductAttention by %g", d)
			}
		}
		for _, off := range []int{1, 4, 6} {
			part := nn.CausalAttention(q.Slice(2, off, 7), k, v, off)
			if d := maxDiff(t, "offset", part, full.Slice(2, off, 7)); d > 1e-6 {
				t.Errorf("hkv %d offset %d: rows differ from the full attention by %g", hkv, off, d)
			}
		}
		// GQA is MHA over repeated heads
		rep := nn.CausalAttention(q, nn.RepeatKV(k, 4/hkv), nn.RepeatKV(v, 4/hkv), 0)
		if d := maxDiff(t, "repeat", full, rep); d != 0 {
			t.Errorf("hkv %d: grouped attention differs from repeated heads by %g", hkv, d)
		}
	}
	if r := nn.RepeatKV(tensor.Arange(0, 4, 1).Reshape(1, 2, 1, 2), 2).Float32s(); !slices.Equal(r, []float32{0, 1, 0, 1, 2, 3, 2, 3}) {
		t.Errorf("RepeatKV = %v", r)
	}
}

func TestRopeScalingRefused(t *testing.T) {
	for _, s := range []nn.RopeScaling{{Type: "yarn", Factor: 2}, {Type: "dynamic", Factor: 2}, {Type: "linear"}, {Type: "llama3", Factor: 8}} {
		if err := s.Validate(); err == nil {
			t.Errorf("%+v: no error", s)
		}
	}
	if err := (nn.RopeScaling{Type: "longrope"}).Validate(); err == nil || !strings.Contains(err.Error(), `"longrope"`) {
		t.Errorf("longrope: %v, want the type named", err)
	}
}

// TestLlamaCacheMatchesRecompute checks the key/value cache against the
// whole-context forward pass, chunk by chunk.
func TestLlamaCacheMatchesRecompute(t *testing.T) {
	m := nn.NewLlamaWith(tinyLlamaConfig(), tensor.NewGenerator(5))
	gen := tensor.NewGenerator(6)
	toks := make([]int, 2*10)
	for i := range toks {
		toks[i] = gen.IntN(29)
	}
	idx := tensor.FromInts(toks, 2, 10)
	want := m.Forward(idx)
	for _, split := range []int{1, 4, 9} {
		c := m.NewKVCache(2, 10)
		m.ForwardCached(idx.Slice(1, 0, split), c)
		got := m.ForwardCached(idx.Slice(1, split, 10), c)
		if d := maxDiff(t, "cached", got, want.Select(1, 9)); d > 1e-5 {
			t.Errorf("split %d: cached logits differ by %g", split, d)
		}
	}
}

func TestGenerateOptions(t *testing.T) {
	m := nn.NewLlamaWith(tinyLlamaConfig(), tensor.NewGenerator(7))
	prompt := tensor.FromInts([]int{1, 2, 5, 7, 9, 4, 8, 11}, 2, 4)
	// greedy past the context size (12): the window is cropped
	out, err := nn.Generate(m, prompt, nn.GenerateOptions{MaxNewTokens: 10, IgnoreEOS: true})
	if err != nil || !slices.Equal(out.Shape(), []int{2, 14}) {
		t.Fatalf("Generate: %v, shape %v", err, out.Shape())
	}
	// the same tokens step by step through Forward
	want := prompt
	for range 10 {
		cond := want
		if n := cond.Size(1); n > 12 {
			cond = cond.Slice(1, n-12, n)
		}
		l := m.Forward(cond)
		next := l.Select(1, l.Size(1)-1).ArgMax(-1).Reshape(2, 1)
		want = tensor.Cat([]*tensor.Tensor{want, next}, 1)
	}
	if !slices.Equal(out.Ints(), want.Ints()) {
		t.Errorf("greedy %v, step by step %v", out.Ints(), want.Ints())
	}
	// stopping: make the first row's next greedy token a stop token
	first := out.Ints()[4]
	got, _ := nn.Generate(m, prompt, nn.GenerateOptions{MaxNewTokens: 10, StopTokenIDs: []int{first}, IgnoreEOS: true})
	row0 := got.Select(0, 0).Ints()
	if row0[4] != first || row0[len(row0)-1] != first {
		t.Errorf("row 0 %v: want it to stop at %d and be padded with it", row0, first)
	}
	// sampling is reproducible with a generator; top-k 1 and a tiny top-p are greedy
	a, _ := nn.Generate(m, prompt, nn.GenerateOptions{MaxNewTokens: 6, Temperature: 0.9, TopK: 5, TopP: 0.9, Generator: tensor.NewGenerator(1)})
	b, _ := nn.Generate(m, prompt, nn.GenerateOptions{MaxNewTokens: 6, Temperature: 0.9, TopK: 5, TopP: 0.9, Generator: tensor.NewGenerator(1)})
	if !slices.Equal(a.Ints(), b.Ints()) {
		t.Errorf("same generator, different samples: %v and %v", a.Ints(), b.Ints())
	}
	for _, o := range []nn.GenerateOptions{{Temperature: 1, TopK: 1}, {Temperature: 1, TopP: 1e-6}} {
		o.MaxNewTokens, o.IgnoreEOS, o.Generator = 6, true, tensor.NewGenerator(2)
		s, _ := nn.Generate(m, prompt, o)
		if !slices.Equal(s.Ints(), out.Slice(1, 0, 10).Ints()) {
			t.Errorf("%+v: %v, want the greedy %v", o, s.Ints(), out.Slice(1, 0, 10).Ints())
		}
	}
	// a cancelled context stops before the first token
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c, err := nn.Generate(m, prompt, nn.GenerateOptions{MaxNewTokens: 4, Context: ctx})
	if err != context.Canceled || c.Size(1) != 4 {
		t.Errorf("cancelled: %v, %d columns", err, c.Size(1))
	}
}

// TestGenerateGPT checks that nn.Generate on a GPT samples what its
// GenerateWith samples.
func TestGenerateGPT(t *testing.T) {
	m := nn.NewGPTWith(nn.GPTConfig{VocabSize: 31, BlockSize: 8, NLayer: 2, NHead: 2, NEmbd: 16}, tensor.NewGenerator(4))
	m.Eval()
	prompt := tensor.FromInts([]int{1, 2, 3, 4, 5, 6}, 2, 3)
	want := m.GenerateWith(prompt, 9, 0.8, 5, tensor.NewGenerator(9)).Ints()
	got, err := nn.Generate(m, prompt, nn.GenerateOptions{MaxNewTokens: 9, Temperature: 0.8, TopK: 5, Generator: tensor.NewGenerator(9)})
	if err != nil || !slices.Equal(got.Ints(), want) {
		t.Errorf("Generate = %v, %v; GenerateWith = %v", got.Ints(), err, want)
	}
}

func TestLlamaStateDictRoundTrip(t *testing.T) {
	for _, tied := range []bool{true, false} {
		cfg := tinyLlamaConfig()
		cfg.TieWordEmbeddings = tied
		a, b := nn.NewLlamaWith(cfg, tensor.NewGenerator(1)), nn.NewLlamaWith(cfg, tensor.NewGenerator(2))
		if err := nn.LoadStateDict(b, nn.StateDictOf(a)); err != nil {
			t.Fatal(err)
		}
		idx := tensor.FromInts([]int{1, 2, 3}, 1, 3)
		if d := maxDiff(t, "round trip", b.Forward(idx), a.Forward(idx)); d != 0 {
			t.Errorf("tied %v: logits differ by %g after a state-dict copy", tied, d)
		}
		_, hasHead := nn.StateDictOf(a)["lm_head.weight"]
		if !hasHead {
			t.Errorf("tied %v: no lm_head.weight in the state dict", tied)
		}
	}
}

// TestLlamaCheckpoint writes a train checkpoint holding a Llama-family
// config (llama_args) and reads it back with LoadCheckpoint.
func TestLlamaCheckpoint(t *testing.T) {
	cfg := tinyLlamaConfig()
	m := nn.NewLlamaWith(cfg, tensor.NewGenerator(8))
	tok, err := tokenizer.Train(context.Background(), "char", []byte("abcdefghij klmnop"), 0)
	if err != nil {
		t.Fatal(err)
	}
	tj, err := tok.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := json.Marshal(map[string]any{"iter": 3, "llama_args": cfg, "tokenizer": json.RawMessage(tj)})
	path := filepath.Join(t.TempDir(), "ckpt.safetensors")
	meta := map[string]string{nn.MetaFormat: nn.TrainCheckpointFormat, nn.MetaTrain: string(rec)}
	if err := nn.SaveStateDictFile(path, nn.StateDictOf(m), meta); err != nil {
		t.Fatal(err)
	}
	ck, err := nn.LoadCheckpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	if ck.LlamaConfig == nil || ck.Model != nil || ck.Iter != 3 {
		t.Fatalf("checkpoint %+v", ck)
	}
	idx := tensor.FromInts([]int{1, 2, 3}, 1, 3)
	if d := maxDiff(t, "checkpoint", ck.LM.Forward(idx), m.Forward(idx)); d != 0 {
		t.Errorf("logits differ by %g after the round trip", d)
	}
	// a config the tensors do not back is refused before anything is built
	cfg.HiddenSize, cfg.NumAttentionHeads = 32, 8
	rec, _ = json.Marshal(map[string]any{"iter": 3, "llama_args": cfg, "tokenizer": json.RawMessage(tj)})
	meta[nn.MetaTrain] = string(rec)
	if err := nn.SaveStateDictFile(path, nn.StateDictOf(m), meta); err != nil {
		t.Fatal(err)
	}
	if _, err := nn.LoadCheckpoint(path); err == nil || !strings.Contains(err.Error(), "model.embed_tokens.weight") {
		t.Errorf("mismatched llama_args: %v", err)
	}
}

// TestConcurrentLlamaGenerate runs Generate on one shared Llama from
// several goroutines, each with a generator of its own: each gets the
// tokens it gets alone (run under -race by CI).
func TestConcurrentLlamaGenerate(t *testing.T) {
	m := nn.NewLlamaWith(tinyLlamaConfig(), tensor.NewGenerator(11))
	m.Eval()
	opts := func(seed uint64) nn.GenerateOptions {
		return nn.GenerateOptions{MaxNewTokens: 6, Temperature: 1, TopK: 10, Generator: tensor.NewGenerator(seed), IgnoreEOS: true}
	}
	prompt := tensor.FromInts([]int{1, 2, 3}, 1, 3)
	want := make([][]int, 4)
	for i := range want {
		out, _ := nn.Generate(m, prompt, opts(uint64(i)))
		want[i] = out.Ints()
	}
	got := make([][]int, 4)
	done := make(chan int)
	for i := range got {
		go func() {
			out, _ := nn.Generate(m, prompt, opts(uint64(i)))
			got[i] = out.Ints()
			done <- i
		}()
	}
	for range got {
		<-done
	}
	for i := range got {
		if !slices.Equal(got[i], want[i]) {
			t.Errorf("goroutine %d: %v, alone %v", i, got[i], want[i])
		}
	}
}

// letters decodes token i as the letter 'a'+i%26.
type letters struct{}

func (letters) Decode(ids []int) string {
	b := make([]byte, len(ids))
	for i, id := range ids {
		b[i] = byte('a' + id%26)
	}
	return string(b)
}

func TestGenerateStopStrings(t *testing.T) {
	m := nn.NewLlamaWith(tinyLlamaConfig(), tensor.NewGenerator(7))
	prompt := tensor.FromInts([]int{1, 2, 5, 7, 9, 4, 8, 11}, 2, 4)
	full, _ := nn.Generate(m, prompt, nn.GenerateOptions{MaxNewTokens: 8, IgnoreEOS: true})
	row0 := full.Select(0, 0).Ints()[4:]
	stop := letters{}.Decode(row0[2:4]) // completed by the fourth new token of row 0
	got, _ := nn.Generate(m, prompt, nn.GenerateOptions{MaxNewTokens: 8, IgnoreEOS: true, StopStrings: []string{stop}, Decoder: letters{}})
	g0 := got.Select(0, 0).Ints()[4:]
	first := 0
	for !strings.Contains(letters{}.Decode(row0[:first+1]), stop) {
		first++
	}
	for i, v := range g0 {
		want := row0[min(i, first)]
		if v != want {
			t.Fatalf("row 0 with stop string %q: %v, want %v up to %d then padded", stop, g0, row0, first)
		}
	}
}
