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
	"github.com/wickml/wick/tokenizer"
)

// bf16Values rewrites the model.safetensors of the hub directory dir with
// its weights rounded to bfloat16 (kept as F32), so that the model loaded
// as float32 and as bfloat16 has the same weights.
func bf16Values(t *testing.T, dir string) {
	t.Helper()
	path := filepath.Join(dir, "model.safetensors")
	sd, meta, err := nn.LoadStateDictFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for n, w := range sd {
		sd[n] = w.ToDType(tensor.BFloat16).ToDType(tensor.Float32)
	}
	if err := nn.SaveStateDictFile(path, sd, meta); err != nil {
		t.Fatal(err)
	}
}

// TestLoRABF16Base fine-tunes LoRA adapters on a bfloat16 base through the
// CLI (--dtype=bfloat16 --lora_rank): the memory estimate counts the
// frozen weights at 2 bytes; the losses equal those of the same run on the
// float32 model holding the same (bfloat16) values, within float32
// summation order, so the adapters' gradients flow through the bfloat16
// weights as through float32 ones; a run resumed from its checkpoint ends
// with the adapter of an uninterrupted run, bit for bit (the resumed base
// is bfloat16 again); sampling with --adapter on the bfloat16 base is the
// library's greedy continuation; full training in bfloat16 stays refused.
func TestLoRABF16Base(t *testing.T) {
	tmp := t.TempDir()
	dir := writeLlamaHub(t, filepath.Join(tmp, "base"), "llama", nil)
	bf16Values(t, dir)
	f32, b16, part := filepath.Join(tmp, "f32"), filepath.Join(tmp, "bf16"), filepath.Join(tmp, "part")
	mustRun(t, loraArgs(dir, f32, "--max_iters=4")...)
	out := mustRun(t, loraArgs(dir, b16, "--max_iters=4", "--dtype=bfloat16")...)
	if !strings.Contains(out, "(frozen, bfloat16), adapters ") {
		t.Errorf("stdout lacks the bfloat16 base's memory line:\n%s", out)
	}
	lf, lb := readLog(t, f32), readLog(t, b16)
	if len(lf) != len(lb) {
		t.Fatalf("%d log records in float32, %d in bfloat16", len(lf), len(lb))
	}
	n := 0
	for i, r := range lf {
		if r.Loss == nil {
			continue
		}
		n++
		if lb[i].Loss == nil || math.Abs(*r.Loss-*lb[i].Loss) > 1e-4*math.Abs(*r.Loss) {
			t.Errorf("iteration %d: loss %v on the float32 base, %v on the bfloat16 one", r.Iter, *r.Loss, lb[i].Loss)
		}
	}
	if n != 4 {
		t.Fatalf("%d training losses logged, want 4", n)
	}

	// resumed: the bfloat16 base again (its products round as the
	// uninterrupted run's did)
	mustRun(t, loraArgs(dir, part, "--max_iters=2", "--dtype=bfloat16")...)
	mustRun(t, "--resume", "--out_dir="+part, "--max_iters=4", "--dtype=bfloat16")
	a, err := os.ReadFile(filepath.Join(b16, nn.AdapterWeightsFile))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(part, nn.AdapterWeightsFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("the resumed bfloat16 run's adapter differs from the uninterrupted run's")
	}

	// sampling with the adapter on the bfloat16 base
	tok, err := tokenizer.LoadGPT2(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := nn.LoadCausalLMWith(dir, nn.LoadOptions{DType: tensor.BFloat16})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nn.LoadAdapter(b16, m); err != nil {
		t.Fatal(err)
	}
	want := greedy16(t, m, tok, tensor.BFloat16, "the river", 6) + "\n"
	gen := []string{"--prompt=the river", "--top_k=1", "--num_tokens=6", "--num_samples=1", "--dtype=bfloat16"}
	for _, args := range [][]string{{"sample", "--init_from=" + dir, "--adapter=" + b16}, {"sample", "--out_dir=" + b16}} {
		if got := mustRun(t, append(args, gen...)...); got != want {
			t.Errorf("%v printed %q, the library's greedy text on the bfloat16 base with the adapter is %q", args, got, want)
		}
	}

	// without --lora_rank, --dtype=bfloat16 is autocast over float32
	// weights; a float32 checkpoint does not resume in it
	full := filepath.Join(tmp, "full")
	mustRun(t, ftArgs(dir, full, "--max_iters=1", "--block_size=16")...)
	mustRun(t, ftArgs(dir, filepath.Join(tmp, "x"), "--max_iters=1", "--dtype=bfloat16")...)
	args := []string{"--resume", "--out_dir=" + full, "--max_iters=2", "--dtype=bfloat16"}
	_, errOut, code := runCLI(t, args...)
	if code == 0 || !strings.Contains(errOut, "--dtype=bfloat16 does not match the checkpoint") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Errorf("train %s: exit %d, stderr %q", strings.Join(args, " "), code, errOut)
	}
}

// TestLoRAMemoryBF16 checks that the estimate counts a 16-bit base at 2
// bytes a weight and leaves the rest as it is.
func TestLoRAMemoryBF16(t *testing.T) {
	cfg := nn.LlamaConfig{VocabSize: 1000, HiddenSize: 64, IntermediateSize: 128, NumHiddenLayers: 2, NumAttentionHeads: 4,
		NumKeyValueHeads: 2, HeadDim: 16, MaxPositionEmbeddings: 64}
	o := defaultOptions()
	o.LoRARank, o.BlockSize = 8, 32
	f := llamaShape(cfg, o).need(4, 32)
	o.Dtype = "bfloat16"
	h := llamaShape(cfg, o).need(4, 32)
	if h.weights != f.weights/2 || h.weights != 2*float64(cfg.NumParams()) {
		t.Errorf("bfloat16 base: weights %v bytes, float32 %v; want 2 bytes a parameter (%d)", h.weights, f.weights, cfg.NumParams())
	}
	if h.adapters != f.adapters || h.optimizer != f.optimizer || h.activations != f.activations {
		t.Errorf("bfloat16 base changed the float32 parts: %+v vs %+v", h, f)
	}
	// a 16-bit head takes the plain loss (nn.Llama.Loss): the logits, their
	// gradient and the log-softmax whole; a float32 one LinearCrossEntropy's
	// chunk
	if bt := 4.0 * 32; h.logits != 4*3*bt*float64(cfg.VocabSize) || f.logits != 4*2*bt*float64(cfg.VocabSize) {
		t.Errorf("logits: bfloat16 base %v bytes, float32 %v", h.logits, f.logits)
	}
	if !strings.Contains(h.line(), "weights ") || !strings.Contains(h.line(), "(frozen, bfloat16)") {
		t.Errorf("line %q", h.line())
	}
	o.LoRARank = 0 // a full fine-tune is not a LoRA base
	if weightBytes(o) != 4 {
		t.Error("a full fine-tune with --dtype=bfloat16 counted at 2 bytes")
	}
}

// TestLoRABF16GPT2 is TestLoRABF16Base's loss check on a pretrained GPT-2
// (c_attn and c_fc adapters, dropout and activation checkpointing on), and
// --merge_lora from its bfloat16 base.
func TestLoRABF16GPT2(t *testing.T) {
	tmp := t.TempDir()
	hub := filepath.Join(tmp, "gpt2-tiny")
	writeHubModel(t, hub, testVocab, 32, true)
	bf16Values(t, hub)
	losses := map[string][]float64{}
	for _, dt := range []string{"float32", "bfloat16"} {
		run := filepath.Join(tmp, dt)
		mustRun(t, ftArgs(hub, run, "--max_iters=3", "--eval_interval=3", "--block_size=16", "--dropout=0.1", "--lora_rank=2",
			"--lora_targets=c_attn,c_fc", "--lora_dropout=0.1", "--learning_rate=1e-2", "--activation_checkpointing", "--merge_lora", "--dtype="+dt)...)
		for _, r := range readLog(t, run) {
			if r.Loss != nil {
				losses[dt] = append(losses[dt], *r.Loss)
			}
		}
	}
	f, b := losses["float32"], losses["bfloat16"]
	if len(f) != 3 || len(b) != 3 {
		t.Fatalf("losses logged: %v and %v", f, b)
	}
	for i := range f {
		if math.Abs(f[i]-b[i]) > 1e-4*math.Abs(f[i]) {
			t.Errorf("iteration %d: loss %v on the float32 base, %v on the bfloat16 one", i, f[i], b[i])
		}
	}
	merged, err := nn.LoadPretrained(filepath.Join(tmp, "bfloat16", mergedDir))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range merged.NamedParameters() { // bfloat16 values, saved as F32
		v := p.Param.Float32s()
		if r := p.Param.ToDType(tensor.BFloat16).Float32s(); !slices.Equal(v, r) {
			t.Fatalf("merged %s holds values that are not bfloat16", p.Name)
		}
	}
}

// TestLoRABaseDType: --dtype picks the base's dtype of a LoRA run on the
// cpu only; without --lora_rank the weights are float32.
func TestLoRABaseDType(t *testing.T) {
	o := defaultOptions()
	o.Dtype = "bfloat16"
	if dt, err := loraBaseDType(o, tensor.CPU); err != nil || dt != tensor.Float32 {
		t.Errorf("without --lora_rank: %v, %v; want float32", dt, err)
	}
	o.LoRARank = 8
	for _, c := range []struct {
		dtype string
		want  tensor.DType
	}{{"bfloat16", tensor.BFloat16}, {"float16", tensor.Float16}, {"float32", tensor.Float32}} {
		o.Dtype = c.dtype
		if dt, err := loraBaseDType(o, tensor.CPU); err != nil || dt != c.want {
			t.Errorf("--dtype=%s: %v, %v; want %v", c.dtype, dt, err, c.want)
		}
	}
	o.Dtype = "bfloat16"
	if _, err := loraBaseDType(o, tensor.CUDA(0)); err == nil || !strings.Contains(err.Error(), "--dtype=bfloat16 with --lora_rank runs on the cpu only so far") {
		t.Errorf("on cuda:0: %v", err)
	}
}
