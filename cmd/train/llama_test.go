package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
	"github.com/wickml/wick/tokenizer"
)

// The tests of --init_from with the Llama family write small random models
// in the hub's layout (config.json, model.safetensors with Hugging Face's
// names) with the test GPT-2 tokenizer's vocab.json and merges.txt.

// llamaHubConfigs are the families the end-to-end tests run, as
// config.json spells them.
var llamaHubConfigs = map[string]map[string]any{
	"llama": {"model_type": "llama", "num_key_value_heads": 1, "tie_word_embeddings": true,
		"rope_scaling": map[string]any{"rope_type": "llama3", "factor": 4.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8}},
	"qwen2": {"model_type": "qwen2", "num_key_value_heads": 2, "tie_word_embeddings": true, "use_sliding_window": false},
	"qwen3": {"model_type": "qwen3", "num_key_value_heads": 2, "head_dim": 12, "tie_word_embeddings": false},
}

// writeLlamaHub writes the random model of family into dir with eos (nil
// for none) and returns its directory.
func writeLlamaHub(t *testing.T, dir, family string, eos any) string {
	t.Helper()
	config := map[string]any{"hidden_size": 16, "intermediate_size": 24, "num_hidden_layers": 2, "num_attention_heads": 2,
		"max_position_embeddings": 64, "rms_norm_eps": 1e-6, "rope_theta": 10000.0, "vocab_size": testVocab, "hidden_act": "silu",
		"eos_token_id": eos}
	for k, v := range llamaHubConfigs[family] {
		config[k] = v
	}
	b, err := json.MarshalIndent(config, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	writeGPT2Tokenizer(t, dir)
	writeFile(t, filepath.Join(dir, "config.json"), b)
	cfg, err := nn.ReadLlamaConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := nn.NewLlamaWith(cfg, tensor.NewGenerator(3))
	sd := nn.StateDict{}
	for _, p := range m.NamedParameters() {
		sd[p.Name] = p.Param.Detach().MulScalar(10) // logits far enough apart for clear greedy choices
	}
	if err := nn.SaveStateDictFile(filepath.Join(dir, "model.safetensors"), sd, map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// libraryGreedy returns the greedy tokens after prompt from the model in
// dir, through the library, ignoring EOS.
func libraryGreedy(t *testing.T, dir, prompt string, n int) ([]int, []int) {
	t.Helper()
	m, err := nn.LoadCausalLM(dir)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.LoadGPT2(dir)
	if err != nil {
		t.Fatal(err)
	}
	ids := tok.Encode(prompt)
	out, err := nn.Generate(m, tensor.FromInts(ids, 1, len(ids)), nn.GenerateOptions{MaxNewTokens: n, IgnoreEOS: true})
	if err != nil {
		t.Fatal(err)
	}
	return ids, out.Ints()[len(ids):]
}

func TestSampleLlamaFamily(t *testing.T) {
	for family := range llamaHubConfigs {
		t.Run(family, func(t *testing.T) {
			dir := writeLlamaHub(t, filepath.Join(t.TempDir(), family), family, nil)
			ids, next := libraryGreedy(t, dir, "the river", 8)
			tok, _ := tokenizer.LoadGPT2(dir)
			out := mustRun(t, "sample", "--init_from="+dir, "--prompt=the river", "--top_k=1", "--num_tokens=8", "--dtype=float32")
			if want := tok.Decode(append(append([]int{}, ids...), next...)); out != want+"\n" {
				t.Errorf("sample printed %q, the library's greedy tokens are %q", out, want)
			}
			// with the fourth new token as config.json's EOS (in a list), the sample stops there
			stop := next[3]
			first := 0
			for first < 3 && next[first] != stop {
				first++
			}
			writeLlamaHub(t, dir, family, []int{testVocab - 1, stop})
			out = mustRun(t, "sample", "--init_from="+dir, "--prompt=the river", "--top_k=1", "--num_tokens=8", "--dtype=float32")
			if want := tok.Decode(append(append([]int{}, ids...), next[:first+1]...)); out != want+"\n" {
				t.Errorf("with eos_token_id %d, sample printed %q, want %q", stop, out, want)
			}
		})
	}
}

func TestFineTuneLlamaFamily(t *testing.T) {
	for family := range llamaHubConfigs {
		t.Run(family, func(t *testing.T) {
			tmp := t.TempDir()
			dir := writeLlamaHub(t, filepath.Join(tmp, family), family, nil)
			run := filepath.Join(tmp, "run")
			out, errOut, code := runCLI(t, ftArgs(dir, run, "--max_iters=3", "--eval_interval=3", "--block_size=16", "--n_layer=6", "--always_save_checkpoint")...)
			if code != 0 {
				t.Fatalf("exit %d, stderr: %s\nstdout: %s", code, errOut, out)
			}
			if want := "--n_layer=6 is overridden by the pretrained model's num_hidden_layers=2"; !strings.Contains(errOut, want) {
				t.Errorf("stderr lacks %q: %s", want, errOut)
			}
			if want := fmt.Sprintf("model: %s, 2 layers", family); !strings.Contains(out, want) {
				t.Errorf("stdout lacks %q:\n%s", want, out)
			}
			_, meta, err := readCheckpoint(filepath.Join(run, ckptName))
			if err != nil {
				t.Fatal(err)
			}
			if meta.Llama == nil || meta.Llama.ModelType != family || meta.Iter != 3 {
				t.Fatalf("checkpoint: llama_args %+v at iteration %d", meta.Llama, meta.Iter)
			}
			losses := trainLosses(readLog(t, run))
			if len(losses) != 3 || !(losses[2] < losses[0]) {
				t.Errorf("train losses %v: want 3, falling", losses)
			}
			out = mustRun(t, "--init_from=resume", "--out_dir="+run, "--max_iters=4")
			if !strings.Contains(out, "resuming at iteration 3") {
				t.Errorf("resume output: %s", out)
			}
			out = mustRun(t, "sample", "--out_dir="+run, "--prompt=the river", "--num_tokens=4", "--top_k=1")
			if !strings.HasPrefix(out, "the river") {
				t.Errorf("sample from the fine-tuned checkpoint: %q", out)
			}
		})
	}
}

// TestLlamaBadDirectories checks that --init_from with a broken Llama
// directory fails with one line naming the problem.
func TestLlamaBadDirectories(t *testing.T) {
	cases := []struct {
		name  string
		edit  func(dir string)
		wants []string
	}{
		{"missing tensor", func(dir string) {
			rewriteWeights(t, dir, func(sd nn.StateDict) { delete(sd, "model.layers.0.mlp.gate_proj.weight") })
		}, []string{`"model.layers.0.mlp.gate_proj.weight"`, "missing tensor"}},
		{"wrong shape", func(dir string) {
			rewriteWeights(t, dir, func(sd nn.StateDict) { sd["model.layers.1.self_attn.k_proj.weight"] = tensor.Zeros(3, 16) })
		}, []string{`"model.layers.1.self_attn.k_proj.weight"`, "[3 16]", "shape mismatch"}},
		{"unknown model_type", func(dir string) { editConfig(t, dir, "model_type", "mixtral") }, []string{`model_type is "mixtral"`}},
		{"unknown rope type", func(dir string) {
			editConfig(t, dir, "rope_scaling", map[string]any{"rope_type": "dynamic", "factor": 2.0})
		}, []string{`rope_scaling type "dynamic" is not supported`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := writeLlamaHub(t, filepath.Join(t.TempDir(), "m"), "qwen2", nil)
			c.edit(dir)
			for _, args := range [][]string{
				{"sample", "--init_from=" + dir, "--num_tokens=2"},
				ftArgs(dir, filepath.Join(t.TempDir(), "out"), "--max_iters=1"),
			} {
				_, errOut, code := runCLI(t, args...)
				if code == 0 {
					t.Fatalf("%v: exit 0", args[:1])
				}
				if strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
					t.Errorf("%v: more than one line:\n%s", args[:1], errOut)
				}
				for _, w := range c.wants {
					if !strings.Contains(errOut, w) {
						t.Errorf("%v: stderr %q lacks %q", args[:1], errOut, w)
					}
				}
			}
		})
	}
}

func rewriteWeights(t *testing.T, dir string, edit func(nn.StateDict)) {
	t.Helper()
	path := filepath.Join(dir, "model.safetensors")
	sd, meta, err := nn.LoadStateDictFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edit(sd)
	if err := nn.SaveStateDictFile(path, sd, meta); err != nil {
		t.Fatal(err)
	}
}

func editConfig(t *testing.T, dir, key string, v any) {
	t.Helper()
	path := filepath.Join(dir, "config.json")
	var c map[string]any
	if err := json.Unmarshal(readFile(t, path), &c); err != nil {
		t.Fatal(err)
	}
	c[key] = v
	b, _ := json.Marshal(c)
	writeFile(t, path, b)
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// writeTokenizerJSON writes the test GPT-2 tokenizer as a tokenizer.json
// into dir, with a post-processor that puts <|endoftext|> before a prompt
// as BOS, and removes vocab.json and merges.txt.
func writeTokenizerJSON(t *testing.T, dir string) {
	t.Helper()
	vocab := map[string]int{}
	for _, r := range byteRunes() {
		vocab[string(r)] = len(vocab)
	}
	for _, m := range testMerges {
		vocab[strings.ReplaceAll(m, " ", "")] = len(vocab)
	}
	bos := len(vocab)
	vocab[tokenizer.EndOfText] = bos
	tj := map[string]any{
		"version":    "1.0",
		"truncation": nil, "padding": nil,
		"added_tokens": []any{map[string]any{"id": bos, "content": tokenizer.EndOfText, "single_word": false,
			"lstrip": false, "rstrip": false, "normalized": false, "special": true}},
		"normalizer":    nil,
		"pre_tokenizer": map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
		"post_processor": map[string]any{"type": "TemplateProcessing",
			"single": []any{map[string]any{"SpecialToken": map[string]any{"id": tokenizer.EndOfText, "type_id": 0}},
				map[string]any{"Sequence": map[string]any{"id": "A", "type_id": 0}}},
			"pair":           []any{map[string]any{"Sequence": map[string]any{"id": "A", "type_id": 0}}},
			"special_tokens": map[string]any{tokenizer.EndOfText: map[string]any{"id": tokenizer.EndOfText, "ids": []int{bos}, "tokens": []string{tokenizer.EndOfText}}}},
		"decoder": map[string]any{"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
		"model": map[string]any{"type": "BPE", "dropout": nil, "unk_token": nil, "continuing_subword_prefix": nil,
			"end_of_word_suffix": nil, "fuse_unk": false, "byte_fallback": false, "ignore_merges": false,
			"vocab": vocab, "merges": testMerges},
	}
	b, err := json.Marshal(tj)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "tokenizer.json"), b)
	for _, f := range []string{"vocab.json", "merges.txt"} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSampleLlamaTokenizerJSON checks that train sample and train
// --init_from read a Llama-family model's tokenizer.json, and that the
// prompt is encoded with its special tokens (the post-processor's BOS), as
// Hugging Face's tokenizer(prompt) encodes it.
func TestSampleLlamaTokenizerJSON(t *testing.T) {
	tmp := t.TempDir()
	dir := writeLlamaHub(t, filepath.Join(tmp, "m"), "llama", nil)
	writeTokenizerJSON(t, dir)
	tok, err := tokenizer.LoadPretrained(dir)
	if err != nil {
		t.Fatal(err)
	}
	ids := tokenizer.EncodeSpecial(tok, "the river")
	if len(ids) < 2 || ids[0] != testVocab-1 {
		t.Fatalf("EncodeSpecial(%q) = %v: want the BOS id %d first", "the river", ids, testVocab-1)
	}
	m, err := nn.LoadCausalLM(dir)
	if err != nil {
		t.Fatal(err)
	}
	out, err := nn.Generate(m, tensor.FromInts(ids, 1, len(ids)), nn.GenerateOptions{MaxNewTokens: 6, IgnoreEOS: true})
	if err != nil {
		t.Fatal(err)
	}
	want := tok.Decode(out.Ints())
	if !strings.HasPrefix(want, tokenizer.EndOfText+"the river") {
		t.Fatalf("library's greedy text %q does not start with BOS and the prompt", want)
	}
	got := mustRun(t, "sample", "--init_from="+dir, "--prompt=the river", "--top_k=1", "--num_tokens=6", "--dtype=float32")
	if got != want+"\n" {
		t.Errorf("sample printed %q, the library's greedy tokens are %q", got, want)
	}
	run := filepath.Join(tmp, "run")
	if _, errOut, code := runCLI(t, ftArgs(dir, run, "--max_iters=2", "--eval_interval=2", "--block_size=16", "--always_save_checkpoint")...); code != 0 {
		t.Fatalf("fine-tuning with tokenizer.json: exit %d: %s", code, errOut)
	}
	got = mustRun(t, "sample", "--out_dir="+run, "--prompt=the river", "--num_tokens=3", "--top_k=1")
	if !strings.HasPrefix(got, tokenizer.EndOfText+"the river") {
		t.Errorf("sample from the fine-tuned checkpoint (its tokenizer.json kept in the checkpoint): %q", got)
	}
}
