package nn_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
)

// badLlamaDir writes a copy of testdata/llama/llama_gqa with its config
// changed by edit and its weights by editW, and returns the directory.
func badLlamaDir(t *testing.T, edit func(map[string]any), editW func(nn.StateDict)) string {
	t.Helper()
	src := llamaDir("llama_gqa")
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join(src, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(cfg)
	}
	b, _ = json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(dir, "config.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	sd, _, err := nn.LoadStateDictFile(filepath.Join(src, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	if editW != nil {
		editW(sd)
	}
	if err := nn.SaveStateDictFile(filepath.Join(dir, "model.safetensors"), sd, nil); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestLoadCausalLMBadDirectories(t *testing.T) {
	cases := []struct {
		name   string
		edit   func(map[string]any)
		editW  func(nn.StateDict)
		target error
		want   []string
	}{
		{"missing tensor", nil, func(sd nn.StateDict) { delete(sd, "model.layers.1.mlp.up_proj.weight") },
			nn.ErrMissingTensor, []string{`"model.layers.1.mlp.up_proj.weight"`, "model.safetensors"}},
		{"wrong shape", nil, func(sd nn.StateDict) { sd["model.norm.weight"] = tensor.Zeros(31) },
			nn.ErrShapeMismatch, []string{`"model.norm.weight"`, "[31]", "[32]"}},
		{"wrong dtype", nil, func(sd nn.StateDict) { sd["model.norm.weight"] = tensor.FromInts(make([]int, 32), 32) },
			nn.ErrDTypeMismatch, []string{`"model.norm.weight"`, "I64"}},
		{"extra tensor", nil, func(sd nn.StateDict) { sd["model.layers.2.mlp.up_proj.weight"] = tensor.Zeros(2) },
			nn.ErrUnexpectedTensor, []string{`"model.layers.2.mlp.up_proj.weight"`}},
		{"unknown model_type", func(c map[string]any) { c["model_type"] = "mixtral" }, nil,
			nn.ErrBadConfig, []string{`model_type is "mixtral"`, "config.json"}},
		{"unknown rope type", func(c map[string]any) { c["rope_scaling"] = map[string]any{"rope_type": "yarn", "factor": 4.0} }, nil,
			nn.ErrBadConfig, []string{`rope_scaling type "yarn" is not supported`}},
		{"sliding window", func(c map[string]any) { c["use_sliding_window"] = true }, nil,
			nn.ErrBadConfig, []string{"use_sliding_window"}},
		{"mistral sliding window", func(c map[string]any) { c["model_type"], c["sliding_window"] = "mistral", 16.0 }, nil,
			nn.ErrBadConfig, []string{"sliding_window 16 is not supported"}},
		{"mixture of experts", func(c map[string]any) { c["num_local_experts"] = 8.0 }, nil,
			nn.ErrBadConfig, []string{"num_local_experts 8", "mixture-of-experts"}},
		{"activation", func(c map[string]any) { c["hidden_act"] = "gelu" }, nil,
			nn.ErrBadConfig, []string{`hidden_act "gelu"`}},
		{"kv heads", func(c map[string]any) { c["num_key_value_heads"] = 3.0 }, nil,
			nn.ErrBadConfig, []string{"num_key_value_heads 3 does not divide num_attention_heads 4"}},
		{"size missing", func(c map[string]any) { delete(c, "hidden_size") }, nil,
			nn.ErrBadConfig, []string{"hidden_size is missing"}},
		{"eos outside", func(c map[string]any) { c["eos_token_id"] = []any{2.0, 500.0} }, nil,
			nn.ErrBadConfig, []string{"eos_token_id 500"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := badLlamaDir(t, c.edit, c.editW)
			m, err := nn.LoadCausalLM(dir)
			if err == nil || m != nil {
				t.Fatalf("LoadCausalLM = %v, %v; want an error", m, err)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error of more than one line:\n%s", msg)
			}
			if !errors.Is(err, c.target) {
				t.Errorf("error %q does not wrap %v", msg, c.target)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
		})
	}
}

func TestReadLlamaConfig(t *testing.T) {
	cfg, err := nn.ReadLlamaConfig(llamaDir("llama3_mqa_bf16"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.RopeScaling.Type != "llama3" || cfg.RopeScaling.OriginalMaxPositionEmbeddings != 16 || cfg.NumKeyValueHeads != 1 || cfg.TieWordEmbeddings || len(cfg.EOSTokenIDs) != 2 {
		t.Errorf("llama3_mqa_bf16: %+v", cfg)
	}
	cfg, err = nn.ReadLlamaConfig(llamaDir("qwen3"))
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.QKNorm || cfg.HeadDim != 16 || cfg.QKVBias || cfg.EOSTokenIDs[0] != 4 {
		t.Errorf("qwen3: %+v", cfg)
	}
	cfg, err = nn.ReadLlamaConfig(llamaDir("qwen2"))
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.QKVBias || cfg.OBias || !cfg.TieWordEmbeddings {
		t.Errorf("qwen2: %+v", cfg)
	}
	// transformers 5 spells rope_theta inside rope_parameters
	dir := badLlamaDir(t, func(c map[string]any) {
		delete(c, "rope_theta")
		c["rope_parameters"] = map[string]any{"rope_type": "linear", "factor": 2.0, "rope_theta": 5e5}
	}, nil)
	cfg, err = nn.ReadLlamaConfig(dir)
	if err != nil || cfg.RopeTheta != 5e5 || cfg.RopeScaling.Type != "linear" {
		t.Errorf("rope_parameters: %+v, %v", cfg, err)
	}
}

// TestLoadCausalLMGPT2 checks that a GPT-2 directory loads as the *GPT of
// LoadPretrained.
func TestLoadCausalLMGPT2(t *testing.T) {
	dir := filepath.Join("..", "testdata", "pretrained", "plain")
	m, err := nn.LoadCausalLM(dir)
	if err != nil {
		t.Fatal(err)
	}
	g, ok := m.(*nn.GPT)
	if !ok {
		t.Fatalf("LoadCausalLM returned %T, want *nn.GPT", m)
	}
	want, err := nn.LoadPretrained(dir)
	if err != nil {
		t.Fatal(err)
	}
	idx := tensor.FromInts([]int{5, 6, 7}, 1, 3)
	if d := maxDiff(t, "gpt2", g.Forward(idx), want.Forward(idx)); d != 0 {
		t.Errorf("logits differ from LoadPretrained's by %g", d)
	}
}

// TestSavePretrainedRoundTrip writes every golden model back in the hub's
// layout and loads it again: the same config and logits.
func TestSavePretrainedRoundTrip(t *testing.T) {
	for _, name := range llamaVariants {
		m, err := nn.LoadCausalLM(llamaDir(name))
		if err != nil {
			t.Fatal(err)
		}
		l := m.(*nn.Llama)
		dir := filepath.Join(t.TempDir(), name)
		if err := l.SavePretrained(dir); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		back, err := nn.LoadCausalLM(dir)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, want := fmt.Sprintf("%+v", back.(*nn.Llama).Config), fmt.Sprintf("%+v", l.Config); got != want {
			t.Errorf("%s: config %s, want %s", name, got, want)
		}
		idx := tensor.FromInts([]int{3, 1, 4, 1, 5}, 1, 5)
		if d := maxDiff(t, name, back.Forward(idx), m.Forward(idx)); d != 0 {
			t.Errorf("%s: logits differ by %g after SavePretrained", name, d)
		}
	}
	bad := tinyLlamaConfigNN()
	bad.ModelType = "qwen2"
	if err := nn.NewLlama(bad).SavePretrained(t.TempDir()); err == nil {
		t.Error("a qwen2 with q/k norms was written")
	}
}

func tinyLlamaConfigNN() nn.LlamaConfig {
	return nn.LlamaConfig{ModelType: "qwen3", VocabSize: 11, HiddenSize: 8, IntermediateSize: 8, NumHiddenLayers: 1,
		NumAttentionHeads: 2, NumKeyValueHeads: 1, HeadDim: 4, MaxPositionEmbeddings: 8, RMSNormEps: 1e-6, RopeTheta: 1e4, QKNorm: true}
}
