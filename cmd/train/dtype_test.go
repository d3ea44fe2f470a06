package main

import (
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

// TestDTypeRefused checks the one-line refusals: training in bfloat16 (it
// is for sampling and serving so far) and an unknown dtype.
func TestDTypeRefused(t *testing.T) {
	tmp := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{tinyArgs(tmp, "--dtype=bfloat16"), "for train sample and serve so far"},
		{tinyArgs(tmp, "--dtype=float16"), "--dtype=float16 is not supported for training yet"},
		{[]string{"sample", "--out_dir=" + tmp, "--dtype=int8"}, "--dtype=int8 is not supported (want float32, bfloat16 or float16)"},
	} {
		out, errOut, code := runCLI(t, c.args...)
		if code == 0 || !strings.Contains(errOut, c.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("train %s: exit %d, stdout %q, stderr %q; want one line with %q", strings.Join(c.args, " "), code, out, errOut, c.want)
		}
	}
}
