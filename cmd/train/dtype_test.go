package main

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
	"github.com/wickml/wick/tokenizer"
)

// greedy16 returns the text of n greedy tokens after prompt from model
// m with its weights converted to dt, decoded by tok.
func greedy16(t *testing.T, m nn.CausalLM, tok tokenizer.Tokenizer, dt tensor.DType, prompt string, n int) string {
	t.Helper()
	nn.ToDType(m, dt)
	m.Eval()
	ids := tok.Encode(prompt)
	out, err := nn.Generate(m, tensor.FromInts(ids, 1, len(ids)), nn.GenerateOptions{MaxNewTokens: n, IgnoreEOS: true})
	if err != nil {
		t.Fatal(err)
	}
	return tok.Decode(out.Ints())
}

// TestSampleDType checks train sample --dtype=bfloat16 and float16 on a
// Llama-family hub directory and on a train checkpoint: the text is the
// library's greedy continuation from the model with its weights in that
// dtype (LoadCausalLMWith for the directory, ToDType for the checkpoint).
func TestSampleDType(t *testing.T) {
	tmp := t.TempDir()
	dir := writeLlamaHub(t, filepath.Join(tmp, "llama"), "llama", nil)
	tok, err := tokenizer.LoadGPT2(dir)
	if err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(tmp, "run")
	mustRun(t, tinyArgs(run, "--max_iters=4", "--eval_interval=2", "--num_samples=1")...)
	for _, c := range []struct {
		flag string
		dt   tensor.DType
	}{{"bfloat16", tensor.BFloat16}, {"float16", tensor.Float16}} {
		m, err := nn.LoadCausalLMWith(dir, nn.LoadOptions{DType: c.dt})
		if err != nil {
			t.Fatal(err)
		}
		want := greedy16(t, m, tok, c.dt, "the river", 8)
		if got := mustRun(t, "sample", "--init_from="+dir, "--prompt=the river", "--top_k=1", "--num_tokens=8", "--dtype="+c.flag); got != want+"\n" {
			t.Errorf("hub --dtype=%s printed %q, the library's greedy tokens are %q", c.flag, got, want)
		}

		ck, err := nn.ReadCheckpoint(ckptPath(run))
		if err != nil {
			t.Fatal(err)
		}
		cm, err := ck.NewCausalLM()
		if err != nil {
			t.Fatal(err)
		}
		want = greedy16(t, cm, ck.Tokenizer, c.dt, "The ", 20)
		if got := mustRun(t, "sample", "--out_dir="+run, "--prompt=The ", "--num_tokens=20", "--num_samples=1", "--top_k=1", "--dtype="+c.flag); got != want+"\n" {
			t.Errorf("checkpoint --dtype=%s printed %q, the library's greedy tokens are %q", c.flag, got, want)
		}
	}
}

// TestDTypeRefused checks the one-line refusals: training in float16 on
// the cpu (without a LoRA base), an unknown dtype, and a resume in another
// dtype than the checkpoint's.
func TestDTypeRefused(t *testing.T) {
	tmp := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{tinyArgs(tmp, "--dtype=float16", "--device=cpu"), "--dtype=float16 does not train on the cpu"},
		{tinyArgs(tmp, "--dtype=int8"), "--dtype=int8 is not supported (want float32, bfloat16 or float16)"},
		{[]string{"sample", "--out_dir=" + tmp, "--dtype=int8"}, "--dtype=int8 is not supported (want float32, bfloat16 or float16)"},
	} {
		out, errOut, code := runCLI(t, c.args...)
		if code == 0 || !strings.Contains(errOut, c.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("train %s: exit %d, stdout %q, stderr %q; want one line with %q", strings.Join(c.args, " "), code, out, errOut, c.want)
		}
	}
}

// TestBF16TrainResume trains with --dtype=bfloat16 (autocast): the loss
// falls, the run differs from the float32 one (the products did round),
// the checkpoint records the dtype, a resume keeps it (and refuses
// another), and the resumed run logs the same losses, bit for bit, as an
// uninterrupted one.
func TestBF16TrainResume(t *testing.T) {
	common := []string{"--eval_interval=10", "--dropout=0.1", "--lr_decay_iters=30", "--dtype=bfloat16"}
	full := t.TempDir()
	out := mustRun(t, tinyArgs(full, append(common, "--max_iters=30")...)...)
	if !strings.Contains(out, "in bfloat16 autocast") {
		t.Errorf("the run does not say it trains in bfloat16:\n%s", out)
	}
	f32 := t.TempDir()
	mustRun(t, tinyArgs(f32, "--eval_interval=10", "--dropout=0.1", "--lr_decay_iters=30", "--max_iters=30")...)
	split := t.TempDir()
	mustRun(t, tinyArgs(split, append(common, "--max_iters=20", "--always_save_checkpoint")...)...)
	_, meta, err := readCheckpoint(ckptPath(split))
	if err != nil {
		t.Fatal(err)
	}
	if meta.Options.Dtype != "bfloat16" {
		t.Fatalf("the checkpoint records dtype %q, want bfloat16", meta.Options.Dtype)
	}
	_, errOut, code := runCLI(t, "--resume", "--out_dir="+split, "--max_iters=30", "--dtype=float32")
	if want := "--dtype=float32 does not match the checkpoint"; code == 0 || !strings.Contains(errOut, want) || !strings.Contains(errOut, "dtype=bfloat16") {
		t.Errorf("resume with --dtype=float32: exit %d, stderr %q; want %q naming both dtypes", code, errOut, want)
	}
	mustRun(t, "--resume", "--out_dir="+split, "--max_iters=30")
	a, b, c := trainLosses(readLog(t, full)), trainLosses(readLog(t, split)), trainLosses(readLog(t, f32))
	if len(a) != 30 || len(b) != 30 || len(c) != 30 {
		t.Fatalf("train records: %d uninterrupted, %d resumed, %d float32; want 30 each", len(a), len(b), len(c))
	}
	same := true
	for it := range 30 {
		if a[it] != b[it] {
			t.Errorf("iteration %d: loss %v uninterrupted, %v resumed", it, a[it], b[it])
		}
		same = same && a[it] == c[it]
	}
	if same {
		t.Error("the bfloat16 run's losses equal the float32 run's: autocast did not round")
	}
	if a[29] >= a[0] || math.Abs(a[29]-c[29]) > 0.05*c[29] {
		t.Errorf("loss %v → %v in bfloat16, %v → %v in float32: want a falling loss within 5%% of float32's", a[0], a[29], c[0], c[29])
	}
}

// TestTrainDType checks which dtype --dtype trains in on each device:
// float32 everywhere, bfloat16 on the cpu and cuda, float16 on cuda only
// (with a loss scaler at PyTorch's initial scale; none for the others).
func TestTrainDType(t *testing.T) {
	for _, c := range []struct {
		flag   string
		dev    tensor.Device
		want   tensor.DType
		errSub string
	}{
		{"float32", tensor.CPU, tensor.Float32, ""},
		{"float32", tensor.CUDA(0), tensor.Float32, ""},
		{"bfloat16", tensor.CPU, tensor.BFloat16, ""},
		{"bfloat16", tensor.CUDA(0), tensor.BFloat16, ""},
		{"float16", tensor.CUDA(1), tensor.Float16, ""},
		{"float16", tensor.CPU, 0, "--dtype=float16 does not train on the cpu"},
	} {
		dt, err := trainDType(&options{Dtype: c.flag}, c.dev)
		if c.errSub != "" {
			if err == nil || !strings.Contains(err.Error(), c.errSub) {
				t.Errorf("--dtype=%s on %s: error %v, want one with %q", c.flag, c.dev, err, c.errSub)
			}
			continue
		}
		if err != nil || dt != c.want {
			t.Errorf("--dtype=%s on %s: %s, %v; want %s", c.flag, c.dev, dt, err, c.want)
		}
		s := newScaler(dt)
		if (s != nil) != (dt == tensor.Float16) || s != nil && (s.Scale() != 65536 || s.GrowthTracker() != 0) {
			t.Errorf("--dtype=%s: loss scaler %v; want one at scale 65536 for float16 alone", c.flag, s)
		}
	}
}
