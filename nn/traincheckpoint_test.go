package nn_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
	"github.com/wickml/wick/tokenizer"
)

// TestLoadCheckpointOld loads the checkpoints that train wrote before the
// tokenizers moved into package tokenizer (testdata/trainckpt) and
// generates from them what `train sample --prompt="The " --seed=7
// --num_samples=2 --num_tokens=30` printed then (KIND.sample.txt). That
// train sample seeded the global generator and then built the model with
// NewGPT, whose initialisation drew from it; the test draws the same
// numbers before generating.
func TestLoadCheckpointOld(t *testing.T) {
	for _, kind := range []string{"char", "bpe"} {
		t.Run(kind, func(t *testing.T) {
			path := "../testdata/trainckpt/" + kind + ".safetensors"
			ck, err := nn.LoadCheckpoint(path)
			if err != nil {
				t.Fatal(err)
			}
			want := nn.GPTConfig{VocabSize: ck.Tokenizer.VocabSize(), BlockSize: 16, NLayer: 1, NHead: 2, NEmbd: 16}
			if ck.Config != want || ck.Model.Config != want || ck.Tokenizer.Kind() != kind || ck.Iter != 20 || ck.BestValLoss == nil {
				t.Errorf("config %+v, tokenizer %s, iter %d, best val loss %v", ck.Config, ck.Tokenizer.Kind(), ck.Iter, ck.BestValLoss)
			}
			if ck.Tensors != nil {
				t.Error("LoadCheckpoint kept the file's tensors")
			}
			sample, err := os.ReadFile("../testdata/trainckpt/" + kind + ".sample.txt")
			if err != nil {
				t.Fatal(err)
			}
			tensor.ManualSeed(7)
			nn.NewGPT(ck.Config) // the draws of the old train sample's initialisation
			start, err := tokenizer.EncodeStrict(ck.Tokenizer, "The ")
			if err != nil {
				t.Fatal(err)
			}
			rows := append(slices.Clone(start), start...)
			out := ck.Model.Generate(tensor.FromInts(rows, 2, len(start)), 30, 0.8, 200)
			n := out.Size(1)
			texts := []string{ck.Tokenizer.Decode(out.Ints()[:n]), ck.Tokenizer.Decode(out.Ints()[n:])}
			if got := strings.Join(texts, "\n---------------\n") + "\n"; got != string(sample) {
				t.Errorf("generated\n%q\ntrain sample printed\n%q", got, sample)
			}
		})
	}
}

// TestLoadFileTrainCheckpoint loads a train checkpoint with LoadFile: the
// optimizer's tensors are skipped and the weights are LoadCheckpoint's.
func TestLoadFileTrainCheckpoint(t *testing.T) {
	path := "../testdata/trainckpt/bpe.safetensors"
	ck, err := nn.LoadCheckpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	sd, _, err := nn.LoadStateDictFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(sd.WithPrefix(nn.OptimizerPrefix)) == 0 {
		t.Fatal("the checkpoint has no optimizer tensors to skip")
	}
	m := nn.NewGPT(ck.Config)
	if err := nn.LoadFile(path, m); err != nil {
		t.Fatal(err)
	}
	want := ck.Model.NamedParameters()
	for i, p := range m.NamedParameters() {
		if !slices.Equal(p.Param.Float32s(), want[i].Param.Float32s()) {
			t.Errorf("%s differs from LoadCheckpoint's", p.Name)
		}
	}
	// The same tensors without train's metadata format are not skipped.
	plain := filepath.Join(t.TempDir(), "plain.safetensors")
	if err := nn.SaveStateDictFile(plain, sd, nil); err != nil {
		t.Fatal(err)
	}
	err = nn.LoadFile(plain, nn.NewGPT(ck.Config))
	if !errors.Is(err, nn.ErrUnexpectedTensor) || !strings.Contains(err.Error(), `"optimizer.state.0.exp_avg"`) {
		t.Errorf("a plain file with optimizer tensors: %v", err)
	}
}

// TestManyProblems checks the error of a load with many problems: the
// first on the error's line, the next seven one per indented line, then
// how many more.
func TestManyProblems(t *testing.T) {
	path := "../testdata/trainckpt/char.safetensors"
	ck, err := nn.LoadCheckpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := ck.Config
	cfg.NEmbd, cfg.NLayer = 32, 2 // every tensor's shape differs, and a layer is missing
	err = nn.LoadFile(path, nn.NewGPT(cfg))
	if err == nil {
		t.Fatal("no error")
	}
	lines := strings.Split(err.Error(), "\n")
	t.Log(err)
	if len(lines) != 8+1 {
		t.Fatalf("%d lines, want 8 problems and how many more", len(lines))
	}
	if want := "nn: load " + path + `: tensor "transformer.wte.weight": shape mismatch: file has [44 16], model needs [44 32]`; lines[0] != want {
		t.Errorf("first line %q, want %q", lines[0], want)
	}
	var list interface{ Unwrap() []error }
	if !errors.As(err, &list) {
		t.Fatalf("%v does not wrap its problems", err)
	}
	var more int
	if _, err := fmt.Sscanf(lines[8], "\tand %d more problems", &more); err != nil || more != len(list.Unwrap())-8 {
		t.Errorf("last line %q: want %d more problems", lines[8], len(list.Unwrap())-8)
	}
	seen := map[string]bool{}
	for _, l := range lines[1:8] {
		if !strings.HasPrefix(l, "\ttensor \"") || seen[l] {
			t.Errorf("problem line %q does not name a tensor, or repeats one", l)
		}
		seen[l] = true
	}
	if !errors.Is(err, nn.ErrShapeMismatch) || !errors.Is(err, nn.ErrMissingTensor) {
		t.Error("the error does not wrap every problem")
	}
}

// writeTrainCheckpoint writes a checkpoint in train's format for a
// 1-layer model of cfg (built with seed 1) and a char tokenizer of chars,
// with the given metadata record (nil: a good one), and returns its path.
func writeTrainCheckpoint(t *testing.T, cfg nn.GPTConfig, tok tokenizer.Tokenizer, record map[string]any) string {
	t.Helper()
	tensor.ManualSeed(1)
	m := nn.NewGPT(cfg)
	sd := nn.StateDictOf(m)
	sd["optimizer.state.0.exp_avg"] = tensor.Zeros(3)
	js, err := tok.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	rec := map[string]any{"iter": 5, "model_args": cfg, "tokenizer": json.RawMessage(js), "config": map[string]any{"anything": 1}}
	for k, v := range record {
		if v == nil {
			delete(rec, k)
		} else {
			rec[k] = v
		}
	}
	meta, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ckpt.safetensors")
	if err := nn.SaveStateDictFile(path, sd, map[string]string{nn.MetaFormat: nn.TrainCheckpointFormat, nn.MetaTrain: string(meta)}); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReadCheckpointErrors: each bad checkpoint is refused with an error
// naming the file and the problem, before any model is built.
func TestReadCheckpointErrors(t *testing.T) {
	tok := tokenizer.NewChar([]byte("abcdefgh \n"))
	cfg := nn.GPTConfig{VocabSize: tok.VocabSize(), BlockSize: 8, NLayer: 1, NHead: 2, NEmbd: 8}
	good := writeTrainCheckpoint(t, cfg, tok, nil)
	ck, err := nn.LoadCheckpoint(good)
	if err != nil {
		t.Fatal(err)
	}
	if ck.Iter != 5 || ck.Config != cfg || ck.Tokenizer.Decode(ck.Tokenizer.Encode("bad")) != "bad" {
		t.Errorf("good checkpoint: iter %d, config %+v", ck.Iter, ck.Config)
	}
	var rec map[string]any
	if err := json.Unmarshal(ck.Metadata, &rec); err != nil || rec["config"] == nil {
		t.Errorf("Metadata lacks train's own fields: %s (%v)", ck.Metadata, err)
	}

	plain := filepath.Join(t.TempDir(), "model.safetensors")
	if err := nn.SaveFile(plain, ck.Model); err != nil {
		t.Fatal(err)
	}
	big := cfg
	big.NLayer = 3 // within bounds, but the file holds one layer
	wide := cfg
	wide.NEmbd = 1 << 16 // within bounds, but not the file's width
	bpe, err := tokenizer.TrainBPE([]byte("abab"), 300)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		path string
		want string
	}{
		{"missing", filepath.Join(t.TempDir(), "none.safetensors"), "is corrupt or unreadable: open "},
		{"not safetensors", writeFile(t, []byte("not a checkpoint at all")), "is corrupt or unreadable: "},
		{"plain model file", plain, `was not written by train (metadata format "", want "wick-train/1")`},
		{"metadata not JSON", writeTrainCheckpoint(t, cfg, tok, map[string]any{"iter": "x"}), "is corrupt: metadata: "},
		{"no model_args", writeTrainCheckpoint(t, cfg, tok, map[string]any{"model_args": nil}), "metadata lacks the model_args"},
		{"no tokenizer", writeTrainCheckpoint(t, cfg, tok, map[string]any{"tokenizer": nil}), "metadata lacks the model_args, the tokenizer"},
		{"negative iter", writeTrainCheckpoint(t, cfg, tok, map[string]any{"iter": -1}), "metadata lacks the model_args, the tokenizer or the step"},
		{"n_layer 1e9", writeTrainCheckpoint(t, cfg, tok, map[string]any{"model_args": map[string]any{"VocabSize": cfg.VocabSize, "BlockSize": 8, "NLayer": 1e9, "NHead": 2, "NEmbd": 8}}), "model_args n_layer=1000000000 is out of range (at most 4096)"},
		{"vocab 2^40", writeTrainCheckpoint(t, cfg, tok, map[string]any{"model_args": map[string]any{"VocabSize": 1 << 40, "BlockSize": 8, "NLayer": 1, "NHead": 2, "NEmbd": 8}}), "model_args vocab_size=1099511627776 is out of range"},
		{"invalid config", writeTrainCheckpoint(t, cfg, tok, map[string]any{"model_args": map[string]any{"VocabSize": cfg.VocabSize, "BlockSize": 8, "NLayer": 1, "NHead": 3, "NEmbd": 8}}), "n_embd 8 must be a multiple of n_head 3"},
		{"bad tokenizer", writeTrainCheckpoint(t, cfg, tok, map[string]any{"tokenizer": map[string]any{"kind": "sentencepiece"}}), `is corrupt: tokenizer: unknown kind "sentencepiece"`},
		{"vocab mismatch", writeTrainCheckpoint(t, cfg, tok, map[string]any{"tokenizer": bpe}), "its tokenizer has 257 tokens, its model 10"},
		{"layers the file lacks", writeTrainCheckpoint(t, cfg, tok, map[string]any{"model_args": big}), `is corrupt: tensor "transformer.h.1.attn.c_attn.weight": missing tensor (model_args need shape [24 8])` + "\n\t" + `tensor "transformer.h.2.attn.c_attn.weight": missing tensor`},
		{"width the file lacks", writeTrainCheckpoint(t, cfg, tok, map[string]any{"model_args": wide}), `tensor "transformer.wte.weight": shape mismatch: file has [10 8], model_args need [10 65536]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, read := range []func(string) (*nn.Checkpoint, error){nn.ReadCheckpoint, nn.LoadCheckpoint} {
				ck, err := read(c.path)
				if err == nil || ck != nil {
					t.Fatalf("no error (checkpoint %v)", ck)
				}
				if msg := err.Error(); !strings.HasPrefix(msg, "nn: checkpoint "+c.path+" ") || !strings.Contains(msg, c.want) {
					t.Errorf("error %q\nwant %q", msg, c.want)
				}
			}
		})
	}
}

// writeFile writes b to a temporary file and returns its path.
func writeFile(t *testing.T, b []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "file.safetensors")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLoadCheckpointSkipsOptimizer: LoadCheckpoint does not read the
// optimizer's tensors (here one of a dtype Wick cannot read, which
// ReadCheckpoint, reading everything, reports).
func TestLoadCheckpointSkipsOptimizer(t *testing.T) {
	tok := tokenizer.NewChar([]byte("abcdefgh \n"))
	cfg := nn.GPTConfig{VocabSize: tok.VocabSize(), BlockSize: 8, NLayer: 1, NHead: 2, NEmbd: 8}
	path := writeTrainCheckpoint(t, cfg, tok, nil)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// F32 [3] and F16 [6] take the same bytes and header length.
	old := []byte(`"optimizer.state.0.exp_avg":{"dtype":"F32","shape":[3]`)
	if !bytes.Contains(b, old) {
		t.Fatalf("header lacks %s", old)
	}
	b = bytes.Replace(b, old, []byte(`"optimizer.state.0.exp_avg":{"dtype":"F16","shape":[6]`), 1)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := nn.ReadCheckpoint(path); !errors.Is(err, nn.ErrDTypeMismatch) || !strings.Contains(err.Error(), `"optimizer.state.0.exp_avg"`) {
		t.Errorf("ReadCheckpoint: %v", err)
	}
	ck, err := nn.LoadCheckpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	if ck.Model == nil || ck.Config != cfg {
		t.Errorf("LoadCheckpoint: config %+v", ck.Config)
	}
}
