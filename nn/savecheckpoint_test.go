package nn_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/optim"
	"github.com/wickml/wick/tensor"
	"github.com/wickml/wick/tokenizer"
)

const userLoopText = "to be or not to be, that is the question. "

// userLoop trains a small GPT on userLoopText for steps AdamW steps, as a
// program with its own loop would, and returns it with its tokenizer and
// optimizer.
func userLoop(t testing.TB, steps int) (*nn.GPT, tokenizer.Tokenizer, *optim.AdamW) {
	tensor.ManualSeed(3)
	tok := tokenizer.NewChar([]byte(userLoopText))
	model := nn.NewGPT(nn.GPTConfig{VocabSize: tok.VocabSize(), BlockSize: 16, NLayer: 1, NHead: 2, NEmbd: 16, Dropout: 0.1})
	opt := optim.NewAdamW(model.Parameters(), optim.AdamWConfig{LR: 1e-2})
	ids := tok.Encode(userLoopText)
	x, y := tensor.FromInts(ids[:16], 1, 16), tensor.FromInts(ids[1:17], 1, 16)
	for range steps {
		model.Loss(x, y).Backward()
		opt.Step()
		opt.ZeroGrad()
	}
	return model, tok, opt
}

// sample returns 24 characters that model samples after "to be" with the
// generator seeded 7.
func sample(model *nn.GPT, tok tokenizer.Tokenizer) string {
	ids := tok.Encode("to be")
	out := model.GenerateWith(tensor.FromInts(ids, 1, len(ids)), 24, 1.0, 0, tensor.NewGenerator(7))
	return tok.Decode(out.Ints())
}

// TestSaveCheckpoint saves a checkpoint from a user's loop and reads it
// back: LoadCheckpoint samples the same text as the model did before
// saving, and ReadCheckpoint's optimizer state resumes the run exactly.
func TestSaveCheckpoint(t *testing.T) {
	model, tok, opt := userLoop(t, 5)
	model.Eval()
	before := sample(model, tok)
	best := 1.25
	path := filepath.Join(t.TempDir(), "ckpt.safetensors")
	ck := &nn.Checkpoint{Model: model, Tokenizer: tok, Iter: 5, BestValLoss: &best, Optimizer: opt.StateDict(),
		Metadata: json.RawMessage(`{"my_run": {"lr": 0.01}, "iter": 99}`)}
	if err := nn.SaveCheckpoint(path, ck); err != nil {
		t.Fatal(err)
	}

	loaded, err := nn.LoadCheckpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := sample(loaded.Model, loaded.Tokenizer); got != before {
		t.Errorf("loaded model samples %q, the saved one %q", got, before)
	}
	if loaded.Config != model.Config || loaded.Iter != 5 || loaded.BestValLoss == nil || *loaded.BestValLoss != best {
		t.Errorf("loaded config %+v, iter %d, best %v; want %+v, 5, %v", loaded.Config, loaded.Iter, loaded.BestValLoss, model.Config, best)
	}
	var rec struct {
		MyRun struct{ LR float64 } `json:"my_run"`
		Iter  int                  `json:"iter"`
	}
	if err := json.Unmarshal(loaded.Metadata, &rec); err != nil || rec.MyRun.LR != 0.01 || rec.Iter != 5 {
		t.Errorf("metadata %s (%v): want the program's my_run kept and iter 5", loaded.Metadata, err)
	}
	if err := nn.LoadFile(path, nn.NewGPT(model.Config)); err != nil {
		t.Errorf("LoadFile: %v", err)
	}

	// Resume: one more step from the file equals one more step of the
	// run that never stopped.
	read, err := nn.ReadCheckpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	resumed, err := read.NewModel()
	if err != nil {
		t.Fatal(err)
	}
	ropt := optim.NewAdamW(resumed.Parameters(), optim.AdamWConfig{LR: 1e-2})
	if err := ropt.LoadStateDict(read.Optimizer); err != nil {
		t.Fatal(err)
	}
	ids := tok.Encode(userLoopText)
	x, y := tensor.FromInts(ids[:16], 1, 16), tensor.FromInts(ids[1:17], 1, 16)
	for _, m := range []struct {
		g *nn.GPT
		o *optim.AdamW
	}{{model, opt}, {resumed, ropt}} {
		m.g.Eval() // no dropout, so that both steps see the same loss
		m.g.Loss(x, y).Backward()
		m.o.Step()
	}
	want, got := model.NamedParameters(), resumed.NamedParameters()
	for i := range want {
		if !slices.Equal(got[i].Param.Float32s(), want[i].Param.Float32s()) {
			t.Errorf("%s differs after a resumed step", want[i].Name)
		}
	}
}

// TestSaveCheckpointErrors checks that SaveCheckpoint refuses what would
// not read back, writing nothing, and panics on nil arguments.
func TestSaveCheckpointErrors(t *testing.T) {
	model, tok, _ := userLoop(t, 0)
	other := tokenizer.NewChar([]byte("abc"))
	dir := t.TempDir()
	cases := []struct {
		name string
		ck   nn.Checkpoint
		want string
	}{
		{"negative step", nn.Checkpoint{Model: model, Tokenizer: tok, Iter: -1}, "the step (Iter) is -1"},
		{"tokenizer of another vocabulary", nn.Checkpoint{Model: model, Tokenizer: other}, fmt.Sprintf("the tokenizer has 3 tokens, the model's vocab_size is %d", tok.VocabSize())},
		{"metadata not an object", nn.Checkpoint{Model: model, Tokenizer: tok, Metadata: json.RawMessage(`[1]`)}, "Metadata is not a JSON object: [1]"},
		{"nil optimizer tensor", nn.Checkpoint{Model: model, Tokenizer: tok, Optimizer: nn.StateDict{"state.0.exp_avg": nil}}, `optimizer tensor "state.0.exp_avg" is nil`},
	}
	for i, c := range cases {
		path := filepath.Join(dir, fmt.Sprint(i))
		err := nn.SaveCheckpoint(path, &c.ck)
		if err == nil || !strings.HasPrefix(err.Error(), "nn: SaveCheckpoint "+path+": ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: a file was written (%v)", c.name, err)
		}
	}
	for _, ck := range []*nn.Checkpoint{nil, {Tokenizer: tok}, {Model: model}} {
		err := tensor.Catch(func() { nn.SaveCheckpoint(filepath.Join(dir, "nil"), ck) })
		var te *tensor.Error
		if !errors.As(err, &te) || te.Op != "SaveCheckpoint" {
			t.Errorf("SaveCheckpoint(%v): %v, want a *tensor.Error panic", ck, err)
		}
	}
}

// A program with its own training loop saves a checkpoint that
// LoadCheckpoint (and train sample) read back: model, config, tokenizer,
// step and optimizer state.
func ExampleSaveCheckpoint() {
	tensor.ManualSeed(1)
	text := "hello, world! "
	tok := tokenizer.NewChar([]byte(text))
	model := nn.NewGPT(nn.GPTConfig{VocabSize: tok.VocabSize(), BlockSize: 8, NLayer: 1, NHead: 2, NEmbd: 16})
	opt := optim.NewAdamW(model.Parameters(), optim.AdamWConfig{LR: 1e-2})
	ids := tok.Encode(text + text)
	x, y := tensor.FromInts(ids[:8], 1, 8), tensor.FromInts(ids[1:9], 1, 8)
	for range 20 {
		model.Loss(x, y).Backward()
		opt.Step()
		opt.ZeroGrad()
	}

	path := filepath.Join(os.TempDir(), "wick-example-ckpt.safetensors")
	defer os.Remove(path)
	ck := &nn.Checkpoint{Model: model, Tokenizer: tok, Iter: 20, Optimizer: opt.StateDict()}
	if err := nn.SaveCheckpoint(path, ck); err != nil {
		fmt.Println(err)
		return
	}

	loaded, err := nn.LoadCheckpoint(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	prompt := tok.Encode("hel")
	model.Eval()
	before := model.Generate(tensor.FromInts(prompt, 1, 3), 5, 1.0, 1).Ints()
	after := loaded.Model.Generate(tensor.FromInts(prompt, 1, 3), 5, 1.0, 1).Ints()
	fmt.Println("step", loaded.Iter, "samples the same:", slices.Equal(before, after))
	// Output:
	// step 20 samples the same: true
}

// TestSaveCheckpointLlama saves a Llama-family model from a user's loop
// (ck.LM) and reads it back with LoadCheckpoint: the same family, config
// (llama_args), logits and greedy tokens.
func TestSaveCheckpointLlama(t *testing.T) {
	tok := tokenizer.NewChar([]byte(userLoopText))
	cfg := nn.LlamaConfig{ModelType: "qwen3", VocabSize: tok.VocabSize(), HiddenSize: 16, IntermediateSize: 24, NumHiddenLayers: 2,
		NumAttentionHeads: 4, NumKeyValueHeads: 2, HeadDim: 8, MaxPositionEmbeddings: 32, RMSNormEps: 1e-6, RopeTheta: 10000}
	model := nn.NewLlamaWith(cfg, tensor.NewGenerator(5))
	opt := optim.NewAdamW(model.Parameters(), optim.AdamWConfig{LR: 1e-2})
	ids := tok.Encode(userLoopText)
	x, y := tensor.FromInts(ids[:16], 1, 16), tensor.FromInts(ids[1:17], 1, 16)
	for range 3 {
		model.Loss(x, y).Backward()
		opt.Step()
		opt.ZeroGrad()
	}
	model.Eval()
	want := model.Forward(x).Float32s()
	path := filepath.Join(t.TempDir(), "ckpt.safetensors")
	if err := nn.SaveCheckpoint(path, &nn.Checkpoint{LM: model, Tokenizer: tok, Iter: 3, Optimizer: opt.StateDict()}); err != nil {
		t.Fatal(err)
	}
	ck, err := nn.LoadCheckpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	if ck.LlamaConfig == nil || ck.LlamaConfig.ModelType != "qwen3" || ck.LlamaConfig.HeadDim != 8 || ck.LlamaConfig.NumKeyValueHeads != 2 || ck.Model != nil || ck.Iter != 3 {
		t.Fatalf("read back llama_args %+v, Model %v, iter %d; want %+v", ck.LlamaConfig, ck.Model, ck.Iter, cfg)
	}
	if got := ck.LM.Forward(x).Float32s(); !slices.Equal(got, want) {
		t.Errorf("logits after LoadCheckpoint differ from the saved model's")
	}
	rd, err := nn.ReadCheckpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(rd.Optimizer) != len(opt.StateDict()) {
		t.Errorf("ReadCheckpoint's optimizer state has %d tensors, want %d", len(rd.Optimizer), len(opt.StateDict()))
	}
}
