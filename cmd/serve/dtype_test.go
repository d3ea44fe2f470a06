package main

import (
	"encoding/json"
	"strings"
	"syscall"
	"testing"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
)

// TestServeDType: --dtype=bfloat16 and float16 serve a train checkpoint
// with its weights rounded to that dtype, answering a greedy completion
// with the library's tokens from the model converted by nn.ToDType.
func TestServeDType(t *testing.T) {
	dir := t.TempDir()
	path := writeCheckpoint(t, dir, 16, 2, 64)
	for _, c := range []struct {
		flag string
		dt   tensor.DType
	}{{"bfloat16", tensor.BFloat16}, {"float16", tensor.Float16}} {
		s := start(t, nil, "--model="+dir, "--served_model_name=tiny", "--dtype="+c.flag, "--device=cpu")
		if want := "parameters in " + c.flag; !strings.Contains(s.stdout.String(), want) {
			t.Errorf("start-up line %q does not say %q", s.stdout, want)
		}
		code, body, err := post(s.base+"/v1/completions", `{"model": "tiny", "prompt": "to be", "max_tokens": 12, "temperature": 0}`)
		if err != nil || code != 200 {
			t.Fatalf("--dtype=%s completion: %d %s %v", c.flag, code, body, err)
		}
		var got struct{ Choices []struct{ Text string } }
		if err := json.Unmarshal([]byte(body), &got); err != nil || len(got.Choices) != 1 {
			t.Fatalf("--dtype=%s: %s %v", c.flag, body, err)
		}
		ck, err := nn.LoadCheckpoint(path)
		if err != nil {
			t.Fatal(err)
		}
		nn.ToDType(ck.LM, c.dt)
		ck.LM.Eval()
		prompt := testChars.Encode("to be")
		out, err := nn.Generate(ck.LM, tensor.FromInts(prompt, 1, len(prompt)), nn.GenerateOptions{MaxNewTokens: 12, IgnoreEOS: true})
		if err != nil {
			t.Fatal(err)
		}
		if want := testChars.Decode(out.Ints()[len(prompt):]); got.Choices[0].Text != want {
			t.Errorf("--dtype=%s: completion %q, the library's greedy tokens %q", c.flag, got.Choices[0].Text, want)
		}
		s.cmd.Process.Signal(syscall.SIGTERM)
		if code := s.wait(t); code != 0 {
			t.Errorf("--dtype=%s: exit status %d after SIGTERM:\n%s%s", c.flag, code, s.stdout, s.stderr)
		}
	}
}
