package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
)

// loraArgs are the flags of a short LoRA fine-tune of the model in dir.
func loraArgs(dir, run string, extra ...string) []string {
	return ftArgs(dir, run, append([]string{"--block_size=16", "--eval_interval=2", "--always_save_checkpoint",
		"--lora_rank=4", "--lora_alpha=8", "--lora_targets=q_proj,v_proj,down_proj", "--lora_dropout=0.05",
		"--learning_rate=1e-2"}, extra...)...)
}

// logits returns the model's logits for a fixed batch.
func logits(m nn.CausalLM) []float32 {
	m.Eval()
	return m.Forward(tensor.FromInts([]int{1, 5, 3, 9, 2, 7, 11, 4}, 2, 4)).Float32s()
}

// TestLoRAFineTune trains adapters on a small hub-layout model end to end:
// only the adapters change, PEFT's files and the merged model land in
// out_dir, the adapter samples through --adapter like the merged model
// and the checkpoint, and the merged model's logits are those of the base
// with the adapter.
func TestLoRAFineTune(t *testing.T) {
	tmp := t.TempDir()
	dir := writeLlamaHub(t, filepath.Join(tmp, "base"), "llama", nil)
	run := filepath.Join(tmp, "run")
	out := mustRun(t, loraArgs(dir, run, "--max_iters=4", "--merge_lora", "--activation_checkpointing")...)
	for _, want := range []string{"lora: rank 4, alpha 8, dropout 0.05 on 6 layers (q_proj,v_proj,down_proj)", "activation checkpointing", "memory: weights ", "(frozen), adapters "} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	for _, f := range []string{nn.AdapterConfigFile, nn.AdapterWeightsFile, ckptName, filepath.Join(mergedDir, "config.json"), filepath.Join(mergedDir, "model.safetensors"), filepath.Join(mergedDir, "vocab.json")} {
		if _, err := os.Stat(filepath.Join(run, f)); err != nil {
			t.Errorf("out_dir: %v", err)
		}
	}
	// the base weights in the checkpoint are the pretrained ones
	sd, meta, err := readCheckpoint(filepath.Join(run, ckptName))
	if err != nil {
		t.Fatal(err)
	}
	hub, _, err := nn.LoadStateDictFile(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	for name, w := range hub {
		if !slices.Equal(sd[name].Float32s(), w.Float32s()) {
			t.Errorf("base weight %s changed in training", name)
		}
	}
	if meta.Iter != 4 || len(sd.WithPrefix(nn.AdapterPrefix)) != 12 {
		t.Errorf("checkpoint at iteration %d with %d adapter tensors; want 4 and 12", meta.Iter, len(sd.WithPrefix(nn.AdapterPrefix)))
	}
	// base + adapter, the merged model and the checkpoint agree
	base, err := nn.LoadCausalLM(dir)
	if err != nil {
		t.Fatal(err)
	}
	plain := logits(base)
	l, err := nn.LoadAdapter(run, base)
	if err != nil {
		t.Fatal(err)
	}
	adapted := logits(base)
	if slices.Equal(adapted, plain) {
		t.Fatal("the trained adapter does not change the logits")
	}
	merged, err := nn.LoadCausalLM(filepath.Join(run, mergedDir))
	if err != nil {
		t.Fatal(err)
	}
	// within 1e-5 of the logits' scale: merging sums in another order
	scale := 0.0
	for _, v := range adapted {
		scale = math.Max(scale, math.Abs(float64(v)))
	}
	for i, v := range logits(merged) {
		if d := math.Abs(float64(v - adapted[i])); d > 1e-5*scale {
			t.Fatalf("merged logit %d is %v, base+adapter %v (largest logit %v)", i, v, adapted[i], scale)
		}
	}
	ck, err := nn.LoadCheckpoint(filepath.Join(run, ckptName))
	if err != nil {
		t.Fatal(err)
	}
	if ck.Adapter == nil || !slices.Equal(logits(ck.LM), adapted) {
		t.Error("the checkpoint's model is not base+adapter")
	}
	l.Merge()
	l.Unmerge()
	if !slices.Equal(logits(base), adapted) {
		t.Error("Merge and Unmerge changed the logits")
	}
	// sampling: --adapter (the folder or its config file), the merged
	// model and the checkpoint give the same greedy text
	gen := []string{"--prompt=the river", "--top_k=1", "--num_tokens=6"}
	want := mustRun(t, append([]string{"sample", "--init_from=" + dir, "--adapter=" + run}, gen...)...)
	for _, args := range [][]string{
		{"sample", "--init_from=" + dir, "--adapter=" + filepath.Join(run, nn.AdapterConfigFile)},
		{"sample", "--init_from=" + filepath.Join(run, mergedDir)},
		{"sample", "--out_dir=" + run},
	} {
		if got := mustRun(t, append(args, gen...)...); got != want {
			t.Errorf("%v printed %q; with --adapter: %q", args, got, want)
		}
	}
}

// TestLoRAResume: a run stopped after 2 iterations and resumed to 4 ends
// with the adapter of a run of 4, bit for bit (dropout on).
func TestLoRAResume(t *testing.T) {
	tmp := t.TempDir()
	dir := writeLlamaHub(t, filepath.Join(tmp, "base"), "qwen3", nil)
	full, part := filepath.Join(tmp, "full"), filepath.Join(tmp, "part")
	mustRun(t, loraArgs(dir, full, "--max_iters=4")...)
	mustRun(t, loraArgs(dir, part, "--max_iters=2")...)
	out := mustRun(t, "--resume", "--out_dir="+part, "--max_iters=4")
	if !strings.Contains(out, "resuming at iteration 2") || !strings.Contains(out, "lora: rank 4") {
		t.Errorf("resume output:\n%s", out)
	}
	a, err := os.ReadFile(filepath.Join(full, nn.AdapterWeightsFile))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(part, nn.AdapterWeightsFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("the resumed run's adapter differs from the uninterrupted run's")
	}
	_, errOut, code := runCLI(t, "--resume", "--out_dir="+part, "--max_iters=6", "--lora_rank=8")
	if code == 0 || !strings.Contains(errOut, "--lora_rank=8 does not match the checkpoint") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Errorf("resume with another rank: exit %d, stderr %q", code, errOut)
	}
}

// TestLoRABadFlags: flags that make no sense, and adapters that do not
// fit, each fail with one line.
func TestLoRABadFlags(t *testing.T) {
	tmp := t.TempDir()
	dir := writeLlamaHub(t, filepath.Join(tmp, "base"), "llama", nil)
	other := writeLlamaHub(t, filepath.Join(tmp, "other"), "qwen3", nil)
	adapterRun := filepath.Join(tmp, "adapter")
	mustRun(t, loraArgs(other, adapterRun, "--max_iters=1", "--num_samples=0")...)
	run := filepath.Join(tmp, "run")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"lora from scratch", []string{"--data=testdata/tiny.txt", "--out_dir=" + run, "--lora_rank=8"}, "--lora_rank needs --init_from=DIR"},
		{"negative rank", ftArgs(dir, run, "--lora_rank=-2"), "--lora_rank must be positive, got -2"},
		{"alpha without rank", ftArgs(dir, run, "--lora_alpha=32"), "--lora_alpha needs --lora_rank=R"},
		{"targets matching nothing", ftArgs(dir, run, "--lora_rank=2", "--lora_targets=q_proj,qkv,wo"), "--lora_targets: qkv, wo match no layer of the Llama-family model"},
		{"tied head", ftArgs(dir, run, "--lora_rank=2", "--lora_targets=lm_head"), "lm_head is tied to the embeddings"},
		{"dropout", ftArgs(dir, run, "--lora_rank=2", "--lora_dropout=1"), "--lora_dropout=1 is out of range"},
		{"adapter without init_from", []string{"sample", "--out_dir=" + run, "--adapter=" + adapterRun}, "--adapter needs --init_from=DIR"},
		{"no adapter there", []string{"sample", "--init_from=" + dir, "--adapter=" + tmp}, "no adapter_config.json there"},
		{"adapter for another base", []string{"sample", "--init_from=" + dir, "--adapter=" + adapterRun}, "an adapter for another base model?"},
	} {
		_, errOut, code := runCLI(t, c.args...)
		if code == 0 || !strings.Contains(errOut, c.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%s: exit %d, stderr %q; want one line containing %q", c.name, code, errOut, c.want)
		}
	}
}

// TestLoRAGPT2 trains adapters on a pretrained GPT-2 (c_attn and c_fc,
// dropout on, activation checkpointing): the base stays as it was, the
// adapter loads in the library and samples through --adapter as the
// checkpoint does; --merge_lora writes the merged model in GPT-2's hub
// layout, which loads with the adapted model's logits.
func TestLoRAGPT2(t *testing.T) {
	tmp := t.TempDir()
	hub := filepath.Join(tmp, "gpt2-tiny")
	writeHubModel(t, hub, testVocab, 32, true)
	run := filepath.Join(tmp, "run")
	out := mustRun(t, ftArgs(hub, run, "--max_iters=2", "--eval_interval=2", "--block_size=16", "--dropout=0.1",
		"--lora_rank=2", "--lora_targets=c_attn,c_fc", "--lora_dropout=0.1", "--learning_rate=1e-2", "--activation_checkpointing")...)
	if !strings.Contains(out, "lora: rank 2, alpha 16, dropout 0.1 on 4 layers (c_attn,c_fc)") {
		t.Errorf("stdout:\n%s", out)
	}
	base, err := nn.LoadPretrained(hub)
	if err != nil {
		t.Fatal(err)
	}
	base.CropBlockSize(16)
	plain := logits(base)
	if _, err := nn.LoadAdapter(run, base); err != nil {
		t.Fatal(err)
	}
	adapted := logits(base)
	ck, err := nn.LoadCheckpoint(filepath.Join(run, ckptName))
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(plain, adapted) || !slices.Equal(logits(ck.LM), adapted) {
		t.Error("the checkpoint's model is not the base with the trained adapter")
	}
	gen := []string{"--prompt=the river", "--top_k=1", "--num_tokens=5"}
	a := mustRun(t, append([]string{"sample", "--out_dir=" + run}, gen...)...)
	b := mustRun(t, append([]string{"sample", "--init_from=" + hub, "--adapter=" + filepath.Join(run, nn.AdapterWeightsFile)}, gen...)...)
	if a == "" || a != b {
		t.Errorf("sample from the checkpoint %q, with --adapter %q", a, b)
	}
	// --merge_lora: the merged model in GPT-2's hub layout loads with
	// LoadPretrained and gives the adapted model's logits
	merge := filepath.Join(tmp, "merge")
	mustRun(t, ftArgs(hub, merge, "--max_iters=2", "--eval_interval=2", "--block_size=16", "--lora_rank=2",
		"--lora_targets=c_attn,c_proj,c_fc", "--learning_rate=1e-2", "--merge_lora")...)
	base, err = nn.LoadPretrained(hub)
	if err != nil {
		t.Fatal(err)
	}
	base.CropBlockSize(16)
	if _, err := nn.LoadAdapter(merge, base); err != nil {
		t.Fatal(err)
	}
	adapted = logits(base)
	merged, err := nn.LoadPretrained(filepath.Join(merge, mergedDir))
	if err != nil {
		t.Fatal(err)
	}
	if merged.Config != base.Config {
		t.Fatalf("merged model's config %+v, the run's %+v", merged.Config, base.Config)
	}
	scale := 0.0
	for _, v := range adapted {
		scale = math.Max(scale, math.Abs(float64(v)))
	}
	got := logits(merged)
	if slices.Equal(got, plain[:len(got)]) {
		t.Fatal("the merged model has the base's logits")
	}
	for i, v := range got {
		if d := math.Abs(float64(v - adapted[i])); d > 1e-5*scale {
			t.Fatalf("merged logit %d is %v, base+adapter %v (largest logit %v)", i, v, adapted[i], scale)
		}
	}
	for _, f := range []string{"vocab.json", "merges.txt"} {
		if _, err := os.Stat(filepath.Join(merge, mergedDir, f)); err != nil {
			t.Errorf("merged model: %v", err)
		}
	}
	if a, b := mustRun(t, append([]string{"sample", "--init_from=" + filepath.Join(merge, mergedDir)}, gen...)...),
		mustRun(t, append([]string{"sample", "--init_from=" + hub, "--adapter=" + merge}, gen...)...); a != b {
		t.Errorf("sample from the merged model %q, with --adapter %q", a, b)
	}
}
