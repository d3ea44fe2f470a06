package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
	"github.com/wickml/wick/tokenizer"
)

// The tests of --init_from write a small GPT-2 in the layout a user has
// after downloading one from the Hugging Face hub: config.json,
// model.safetensors with GPT2LMHeadModel's names (the "transformer."
// prefix, Conv1D weights stored [in, out], the attention-mask buffers, no
// lm_head.weight), and GPT-2's tokenizer files vocab.json and merges.txt
// with a vocabulary of the 256 bytes, a few merges and <|endoftext|>.
// (testdata/pretrained's models have 97 tokens, fewer than GPT-2's
// byte-level tokenizer needs.)

// testMerges are the merges of the test tokenizer, in rank order, in
// GPT-2's byte-level spelling (Ġ is a space).
var testMerges = []string{"h e", "t he", "Ġ t", "Ġt he", "i n", "a n", "e r", "o u", "Ġ a", "n d", "Ġa nd", "Ġ s", "i t"}

// byteRunes returns GPT-2's bytes_to_unicode table: the printable bytes
// stand for themselves, the others for 256, 257, ….
func byteRunes() [256]rune {
	var m [256]rune
	n := 0
	for b := range 256 {
		if b >= '!' && b <= '~' || b >= 0xA1 && b <= 0xAC || b >= 0xAE && b <= 0xFF {
			m[b] = rune(b)
		} else {
			m[b] = rune(256 + n)
			n++
		}
	}
	return m
}

// writeGPT2Tokenizer writes vocab.json and merges.txt into dir and returns
// the number of tokens.
func writeGPT2Tokenizer(t *testing.T, dir string) int {
	t.Helper()
	vocab := map[string]int{}
	for _, r := range byteRunes() {
		vocab[string(r)] = len(vocab)
	}
	for _, m := range testMerges {
		vocab[strings.ReplaceAll(m, " ", "")] = len(vocab)
	}
	vocab[tokenizer.EndOfText] = len(vocab)
	b, err := json.Marshal(vocab)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "vocab.json"), b)
	writeFile(t, filepath.Join(dir, "merges.txt"), []byte("#version: 0.2\n"+strings.Join(testMerges, "\n")+"\n"))
	return len(vocab)
}

// writeHubModel writes a random GPT-2 with vocab tokens, a context of
// nPositions, 2 layers, 2 heads and width 16 into dir as the hub does, with
// its tokenizer files when withTokenizer, and returns the model.
func writeHubModel(t *testing.T, dir string, vocab, nPositions int, withTokenizer bool) *nn.GPT {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := nn.GPTConfig{VocabSize: vocab, BlockSize: nPositions, NLayer: 2, NHead: 2, NEmbd: 16, Bias: true, Activation: nn.ActGELUTanh}
	g := nn.NewGPTWith(cfg, tensor.NewGenerator(7))
	sd := nn.StateDict{}
	for _, p := range g.NamedParameters() {
		w := p.Param.Detach()
		if strings.HasSuffix(p.Name, ".weight") && (strings.Contains(p.Name, ".c_attn.") || strings.Contains(p.Name, ".c_proj.") || strings.Contains(p.Name, ".c_fc.")) {
			w = w.T().Contiguous() // Conv1D: [in, out]
		}
		if p.Name != "lm_head.weight" {
			sd[p.Name] = w
		}
	}
	for i := range cfg.NLayer {
		sd[fmt.Sprintf("transformer.h.%d.attn.bias", i)] = tensor.Ones(nPositions, nPositions).Tril(0).Reshape(1, 1, nPositions, nPositions)
		sd[fmt.Sprintf("transformer.h.%d.attn.masked_bias", i)] = tensor.New([]float32{-1e4})
	}
	if err := nn.SaveStateDictFile(filepath.Join(dir, "model.safetensors"), sd, map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	config := map[string]any{"model_type": "gpt2", "architectures": []string{"GPT2LMHeadModel"}, "activation_function": "gelu_new",
		"layer_norm_epsilon": 1e-5, "n_embd": cfg.NEmbd, "n_head": cfg.NHead, "n_layer": cfg.NLayer, "n_positions": nPositions,
		"n_ctx": nPositions, "vocab_size": vocab, "n_inner": nil, "bos_token_id": vocab - 1, "eos_token_id": vocab - 1}
	b, err := json.MarshalIndent(config, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "config.json"), b)
	if withTokenizer {
		if n := writeGPT2Tokenizer(t, dir); n != vocab {
			t.Fatalf("test tokenizer has %d tokens, model %d", n, vocab)
		}
	}
	return g
}

// testVocab is the size of the test tokenizer's vocabulary.
var testVocab = 256 + len(testMerges) + 1

// ftArgs are the flags of a short fine-tuning run on testdata/tiny.txt.
func ftArgs(model, outDir string, extra ...string) []string {
	args := []string{"--init_from=" + model, "--data=testdata/tiny.txt", "--out_dir=" + outDir,
		"--batch_size=4", "--learning_rate=1e-3", "--decay_lr=false", "--eval_iters=2",
		"--log_interval=1", "--num_tokens=8"}
	return append(args, extra...)
}

// greedy returns the greedy continuation by n tokens of prompt from the
// pretrained model in dir, computed through the library.
func greedy(t *testing.T, dir, prompt string, n int) string {
	t.Helper()
	g, err := nn.LoadPretrained(dir)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.LoadGPT2(dir)
	if err != nil {
		t.Fatal(err)
	}
	g.Eval()
	ids := tok.Encode(prompt)
	out := g.Generate(tensor.FromInts(ids, 1, len(ids)), n, 1, 1)
	return tok.Decode(out.Ints())
}

func TestFineTunePretrained(t *testing.T) {
	tmp := t.TempDir()
	hub := filepath.Join(tmp, "gpt2-tiny")
	ref := writeHubModel(t, hub, testVocab, 32, true)

	// One step of a negligible learning rate (train saves no checkpoint
	// before the first step, as nanoGPT): the checkpoint holds the
	// pretrained weights, the position embedding cropped to --block_size
	// as nanoGPT's crop_block_size does. Shape flags that disagree are
	// overridden, with a note each.
	zero := filepath.Join(tmp, "zero")
	out, errOut, code := runCLI(t, ftArgs(hub, zero, "--max_iters=1", "--learning_rate=1e-30", "--weight_decay=0", "--eval_interval=1",
		"--block_size=16", "--n_layer=6", "--bias=false")...)
	if code != 0 {
		t.Fatalf("exit %d, stderr: %s\nstdout: %s", code, errOut, out)
	}
	for _, want := range []string{"--n_layer=6 is overridden by the pretrained model's n_layer=2", "--bias=false is overridden"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q: %s", want, errOut)
		}
	}
	for _, want := range []string{fmt.Sprintf("gpt2 tokenizer with %d tokens", testVocab), "n_layer=2 n_head=2 n_embd=16 block_size=16 dropout=0 bias=true"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	sd, meta, err := readCheckpoint(filepath.Join(zero, ckptName))
	if err != nil {
		t.Fatal(err)
	}
	wantCfg := ref.Config
	wantCfg.BlockSize = 16
	if meta.Model != wantCfg {
		t.Errorf("checkpoint config %+v, want %+v", meta.Model, wantCfg)
	}
	if meta.tok.Kind() != "gpt2" || meta.tok.VocabSize() != testVocab {
		t.Errorf("checkpoint tokenizer %s with %d tokens, want gpt2 with %d", meta.tok.Kind(), meta.tok.VocabSize(), testVocab)
	}
	for _, p := range ref.NamedParameters() {
		want := p.Param
		if p.Name == "transformer.wpe.weight" {
			want = want.Slice(0, 0, 16)
		}
		got := sd[p.Name]
		if got == nil {
			t.Errorf("checkpoint lacks %s", p.Name)
			continue
		}
		if fmt.Sprint(got.Shape()) != fmt.Sprint(want.Shape()) {
			t.Errorf("%s: shape %v, want %v", p.Name, got.Shape(), want.Shape())
			continue
		}
		g, w := got.Float32s(), want.Contiguous().Float32s()
		for i := range w {
			if math.Abs(float64(g[i]-w[i])) > 1e-20 {
				t.Errorf("%s[%d] = %v, want the pretrained %v", p.Name, i, g[i], w[i])
				break
			}
		}
	}

	// Fine-tune 6 steps straight, and 3 + 3 with a resume: the same
	// losses; then sample from the checkpoint.
	full, split := filepath.Join(tmp, "full"), filepath.Join(tmp, "split")
	mustRun(t, ftArgs(hub, full, "--max_iters=6", "--eval_interval=3", "--block_size=16", "--dropout=0.1")...)
	mustRun(t, ftArgs(hub, split, "--max_iters=3", "--eval_interval=3", "--block_size=16", "--dropout=0.1", "--always_save_checkpoint")...)
	out = mustRun(t, "--init_from=resume", "--out_dir="+split, "--max_iters=6")
	if !strings.Contains(out, "resuming at iteration 3") {
		t.Fatalf("resume output: %s", out)
	}
	la, lb := trainLosses(readLog(t, full)), trainLosses(readLog(t, split))
	if len(la) != 6 || len(lb) != 6 {
		t.Fatalf("train records: %d uninterrupted, %d resumed; want 6 each", len(la), len(lb))
	}
	for it := range 6 {
		if la[it] != lb[it] {
			t.Errorf("iteration %d: loss %v uninterrupted, %v resumed", it, la[it], lb[it])
		}
	}
	_, meta, err = readCheckpoint(filepath.Join(split, ckptName))
	if err != nil {
		t.Fatal(err)
	}
	if meta.Iter != 6 || meta.Model != func() nn.GPTConfig { c := wantCfg; c.Dropout = 0.1; return c }() {
		t.Errorf("resumed checkpoint at iteration %d with %+v", meta.Iter, meta.Model)
	}
	out = mustRun(t, "sample", "--out_dir="+split, "--prompt=the river", "--num_tokens=6", "--top_k=1")
	if !strings.HasPrefix(out, "the river") || len(out) <= len("the river\n") {
		t.Errorf("sample from the fine-tuned checkpoint: %q", out)
	}
	// The checkpoint of no steps samples what the pretrained model does
	// while the context fits in the cropped block.
	out = mustRun(t, "sample", "--out_dir="+zero, "--prompt=the river", "--num_tokens=6", "--top_k=1")
	if want := greedy(t, hub, "the river", 6) + "\n"; out != want {
		t.Errorf("greedy sample of the unchanged checkpoint %q, want the pretrained model's %q", out, want)
	}
}

func TestSamplePretrained(t *testing.T) {
	tmp := t.TempDir()
	hub := filepath.Join(tmp, "model")
	writeHubModel(t, hub, testVocab, 32, true)
	// --top_k=1 is greedy: the library's tokens, past the context too.
	for _, n := range []int{5, 40} {
		out := mustRun(t, "sample", "--init_from="+hub, "--prompt=And the", "--top_k=1", fmt.Sprintf("--num_tokens=%d", n))
		if want := greedy(t, hub, "And the", n) + "\n"; out != want {
			t.Errorf("%d tokens: %q, want %q", n, out, want)
		}
	}
	// The tokenizer may come from another directory; a hub name resolves
	// in the Hugging Face cache.
	weights, toks := filepath.Join(tmp, "weights"), filepath.Join(tmp, "tokenizer")
	writeHubModel(t, weights, testVocab, 32, false)
	writeGPT2Tokenizer(t, toks)
	a := mustRun(t, "sample", "--init_from="+weights, "--tokenizer_dir="+toks, "--prompt=in", "--seed=3", "--num_tokens=10", "--num_samples=2")
	cache := filepath.Join(tmp, "hub")
	snap := filepath.Join(cache, "models--gpt2", "snapshots", "0123abcd")
	writeHubModel(t, snap, testVocab, 32, true)
	if err := os.MkdirAll(filepath.Join(cache, "models--gpt2", "refs"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(cache, "models--gpt2", "refs", "main"), []byte("0123abcd"))
	t.Setenv("HF_HUB_CACHE", cache)
	b := mustRun(t, "sample", "--init_from=gpt2", "--prompt=in", "--seed=3", "--num_tokens=10", "--num_samples=2")
	if a != b || !strings.Contains(a, "\n---------------\n") {
		t.Errorf("the same model and seed sampled %q from a directory and %q from the hub cache", a, b)
	}
}

func TestFineTuneConfig(t *testing.T) {
	cfg, err := filepath.Abs("testdata/nanogpt/finetune_shakespeare.py")
	if err != nil {
		t.Fatal(err)
	}
	data, err := filepath.Abs("testdata/tiny.txt")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	hub := filepath.Join(tmp, "model")
	writeHubModel(t, hub, testVocab, 32, true)
	t.Chdir(tmp)
	out, errOut, code := runCLI(t, cfg, "--init_from="+hub, "--data="+data, "--max_iters=2", "--eval_iters=2", "--num_tokens=4")
	if code != 0 {
		t.Fatalf("exit %d, stderr: %s\nstdout: %s", code, errOut, out)
	}
	_, meta, err := readCheckpoint(filepath.Join("out-shakespeare", ckptName))
	if err != nil {
		t.Fatal(err)
	}
	o := meta.Options
	checks := []struct {
		name      string
		got, want any
	}{
		{"iterations", meta.Iter, 2},
		{"eval_interval", o.EvalInterval, 5},
		{"always_save_checkpoint", o.AlwaysSave, false},
		{"wandb_project", o.WandbProject, "shakespeare"},
		{"wandb_run_name prefix", strings.HasPrefix(o.WandbRunName, "ft-"), true},
		{"batch_size", o.BatchSize, 1},
		{"gradient_accumulation_steps", o.GradAccum, 32},
		{"learning_rate", o.LearningRate, 3e-5},
		{"decay_lr", o.DecayLR, false},
		{"tokenizer", o.Tokenizer, "gpt2"},
		{"block_size (the model's n_positions)", meta.Model.BlockSize, 32},
		{"activation", meta.Model.Activation, nn.ActGELUTanh},
		{"bias", meta.Model.Bias, true},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %#v, want %#v", c.name, c.got, c.want)
		}
	}
	// The constant learning rate of the config.
	for _, r := range readLog(t, "out-shakespeare") {
		if r.Kind == "train" && r.LR != 3e-5 {
			t.Errorf("iteration %d: lr %v, want 3e-5", r.Iter, r.LR)
		}
	}
}

func TestBadPretrained(t *testing.T) {
	tmp := t.TempDir()
	hub := filepath.Join(tmp, "model")
	writeHubModel(t, hub, testVocab, 32, true)
	noTok := filepath.Join(tmp, "notok")
	writeHubModel(t, noTok, testVocab, 32, false)
	noMerges := filepath.Join(tmp, "nomerges")
	writeHubModel(t, noMerges, testVocab, 32, true)
	if err := os.Remove(filepath.Join(noMerges, "merges.txt")); err != nil {
		t.Fatal(err)
	}
	small := filepath.Join(tmp, "small") // fewer rows than the tokenizer has ids
	writeHubModel(t, small, 200, 32, false)
	truncated := filepath.Join(tmp, "truncated")
	writeHubModel(t, truncated, testVocab, 32, true)
	weights := filepath.Join(truncated, "model.safetensors")
	if fi, err := os.Stat(weights); err != nil || os.Truncate(weights, fi.Size()-100) != nil {
		t.Fatal("cannot truncate ", weights)
	}
	empty := filepath.Join(tmp, "empty")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "out")
	t.Setenv("HF_HUB_CACHE", filepath.Join(tmp, "no-cache"))
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"missing dir", ftArgs(filepath.Join(tmp, "nope"), out), "no such directory"},
		{"hub name not cached", ftArgs("gpt2-medium", out), "no snapshot in the Hugging Face cache"},
		{"dir without config", ftArgs(empty, out, "--tokenizer_dir="+hub), "config.json"},
		{"tokenizer files missing", ftArgs(noTok, out), "holds neither vocab.json and merges.txt nor encoder.json and vocab.bpe"},
		{"merges.txt missing", ftArgs(noMerges, out), "merges.txt"},
		{"tokenizer_dir empty", ftArgs(hub, out, "--tokenizer_dir="+empty), "--tokenizer_dir: " + empty + " holds neither"},
		{"block_size larger than n_positions", ftArgs(hub, out, "--block_size=64"), "--block_size=64 is larger than the pretrained model's n_positions=32"},
		{"char tokenizer", ftArgs(hub, out, "--tokenizer=char"), "--tokenizer=char cannot be used with --init_from"},
		{"vocabulary larger than the model's", ftArgs(small, out, "--tokenizer_dir="+hub), "more than the pretrained model's vocab_size=200"},
		{"sample missing dir", []string{"sample", "--init_from=" + filepath.Join(tmp, "nope")}, "no such directory"},
		{"sample tokenizer files missing", []string{"sample", "--init_from=" + noTok}, "holds neither"},
		{"sample dir without config", []string{"sample", "--init_from=" + empty, "--tokenizer_dir=" + hub}, "config.json"},
		{"truncated weights", ftArgs(truncated, out), "model.safetensors"},
		{"sample truncated weights", []string{"sample", "--init_from=" + truncated}, "model.safetensors"},
	}
	before := snapshot(t, tmp)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stdout, errOut, code := runCLI(t, c.args...)
			if code != 1 {
				t.Errorf("exit %d, want 1; stdout: %s", code, stdout)
			}
			if strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "train: ") {
				t.Errorf("stderr is not one line starting with \"train: \": %q", errOut)
			}
			if !strings.Contains(errOut, c.want) {
				t.Errorf("stderr %q does not name the problem (%q)", errOut, c.want)
			}
		})
	}
	after := snapshot(t, tmp)
	for p, h := range before {
		if after[p] != h {
			t.Errorf("%s was changed or removed by a failed run", p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s was created by a failed run", p)
		}
	}
}

// TestScratchGPT2Tokenizer: --tokenizer=gpt2 with --tokenizer_dir trains a
// new model on GPT-2's vocabulary; its checkpoint resumes and samples.
func TestScratchGPT2Tokenizer(t *testing.T) {
	tmp := t.TempDir()
	toks, out := filepath.Join(tmp, "tok"), filepath.Join(tmp, "out")
	writeGPT2Tokenizer(t, toks)
	mustRun(t, tinyArgs(out, "--tokenizer=gpt2", "--tokenizer_dir="+toks, "--max_iters=4", "--eval_interval=2")...)
	_, meta, err := readCheckpoint(filepath.Join(out, ckptName))
	if err != nil {
		t.Fatal(err)
	}
	if meta.tok.Kind() != "gpt2" || meta.Model.VocabSize != testVocab || meta.Model.Activation != nn.ActGELU || meta.Model.NLayer != 1 {
		t.Errorf("checkpoint: %s tokenizer, model %+v; want gpt2 with %d tokens and tinyArgs' model", meta.tok.Kind(), meta.Model, testVocab)
	}
	if s := mustRun(t, "--resume", "--out_dir="+out, "--max_iters=6"); !strings.Contains(s, "resuming at iteration 4") {
		t.Errorf("resume output: %s", s)
	}
	if s := mustRun(t, "sample", "--out_dir="+out, "--prompt=the", "--num_tokens=3"); !strings.HasPrefix(s, "the") {
		t.Errorf("sample %q does not start with the prompt", s)
	}
}

// TestScratchEmbeddedGPT2: --tokenizer=gpt2 without --tokenizer_dir trains
// on the GPT-2 vocabulary built into Wick (tokenizer.NewGPT2).
func TestScratchEmbeddedGPT2(t *testing.T) {
	out := t.TempDir()
	s := mustRun(t, tinyArgs(out, "--tokenizer=gpt2", "--max_iters=2", "--eval_interval=2", "--num_samples=0")...)
	if !strings.Contains(s, "gpt2 tokenizer with 50257 tokens") {
		t.Errorf("output: %s", s)
	}
	_, meta, err := readCheckpoint(filepath.Join(out, ckptName))
	if err != nil {
		t.Fatal(err)
	}
	text := "Hello world, I'LL be back.<|endoftext|>"
	if got, want := meta.tok.Encode(text), tokenizer.NewGPT2().Encode(text); !slices.Equal(got, want) || meta.Model.VocabSize != 50257 {
		t.Errorf("checkpoint: tokenizer encodes %v, want %v; vocab_size %d", got, want, meta.Model.VocabSize)
	}
}
