package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
	"github.com/wickml/wick/tokenizer"
)

// fakeCheckpoint writes dir/ckpt.safetensors for a 1-layer, 16-wide model
// of testdata/tiny.txt's characters, with real tensors, and metadata that
// mutate may change afterwards (so that the file stays small whatever the
// metadata claims). With mutate nil the checkpoint is good: sample and
// resume accept it.
func fakeCheckpoint(t *testing.T, dir string, mutate func(m *ckptMeta)) {
	t.Helper()
	tiny, err := os.ReadFile("testdata/tiny.txt")
	if err != nil {
		t.Fatal(err)
	}
	tok := tokenizer.NewChar(tiny)
	js, err := tok.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	o := defaultOptions()
	o.NLayer, o.NHead, o.NEmbd, o.BlockSize, o.BatchSize, o.NumTokens = 1, 2, 16, 16, 4, 20
	o.OutDir, o.Data = dir, "testdata/tiny.txt"
	cfg := nn.GPTConfig{VocabSize: tok.VocabSize(), BlockSize: o.BlockSize, NLayer: o.NLayer, NHead: o.NHead, NEmbd: o.NEmbd}
	model := nn.NewGPT(cfg)
	opt := newOptimizer(model, o)
	meta := &ckptMeta{Iter: 0, Model: cfg, Options: o, Tokenizer: js,
		RNGGlobal: tensor.NewGenerator(1).State(), RNGSampler: tensor.NewGenerator(2).State()}
	if mutate != nil {
		mutate(meta)
	}
	meta.ModelArgs = &meta.Model // model_args in the file
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// Written as saveCheckpoint writes it, but without nn.SaveCheckpoint's
	// checks, which refuse the metadata that mutate corrupts.
	sd := nn.StateDictOf(model)
	for k, v := range opt.StateDict() {
		sd[nn.OptimizerPrefix+k] = v
	}
	js, err = json.Marshal(meta)
	if err != nil {
		t.Fatal(err)
	}
	if err := nn.SaveStateDictFile(filepath.Join(dir, ckptName), sd, map[string]string{nn.MetaFormat: nn.TrainCheckpointFormat, nn.MetaTrain: string(js)}); err != nil {
		t.Fatal(err)
	}
}

// runBinary runs the built train binary and returns its stderr, exit
// status, wall time and peak resident memory in bytes.
func runBinary(t *testing.T, args ...string) (stderr string, code int, wall time.Duration, maxRSS int64) {
	t.Helper()
	cmd := exec.Command(trainBinary(t), args...)
	var e bytes.Buffer
	cmd.Stderr = &e
	start := time.Now()
	err := cmd.Run()
	wall = time.Since(start)
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Fatalf("no rusage on %s", runtime.GOOS)
	}
	maxRSS = ru.Maxrss // bytes on darwin, KiB elsewhere
	if runtime.GOOS != "darwin" {
		maxRSS <<= 10
	}
	return e.String(), cmd.ProcessState.ExitCode(), wall, maxRSS
}

// TestSizeLimits runs train on sizes that cannot be allocated, from flags
// and from checkpoint metadata, for train sample and --resume: each must
// fail with exit status 1 and one line on stderr naming the problem,
// having allocated under 100 MB. (Before these checks each case ended in
// a stack dump after allocating gigabytes.) The wall-time bound is loose
// on purpose, for a loaded machine; the cases take milliseconds.
func TestSizeLimits(t *testing.T) {
	tmp := t.TempDir()
	out := filepath.Join(tmp, "out")
	flagArgs := func(extra ...string) []string {
		return append([]string{"--data=testdata/tiny.txt", "--out_dir=" + out}, extra...)
	}
	type tc struct {
		name string
		args []string
		want []string
	}
	cases := []tc{
		{"block_size 100000", flagArgs("--block_size=100000"), []string{"training would need", "available", "--block_size"}},
		{"batch_size 1e9", flagArgs("--batch_size=1000000000"), []string{"--batch_size=1000000000 is out of range"}},
		{"n_embd 2^30", flagArgs("--n_embd=1073741824", "--n_head=2"), []string{"--n_embd=1073741824 is out of range"}},
		{"n_layer 1e9", flagArgs("--n_layer=1000000000"), []string{"--n_layer=1000000000 is out of range"}},
		{"max_memory", flagArgs("--max_memory=1MiB"), []string{"training would need", "1 MiB allowed by --max_memory"}},
		{"sample num_samples", []string{"sample", "--out_dir=" + filepath.Join(tmp, "good"), "--num_samples=100000", "--max_memory=512MiB"},
			[]string{"sampling would need", "512 MiB allowed by --max_memory", "--num_samples"}},
	}
	fakeCheckpoint(t, filepath.Join(tmp, "good"), nil)
	bad := []struct {
		name   string
		want   string
		mutate func(m *ckptMeta)
	}{
		{"NLayer 1e9", "n_layer=1000000000 is out of range", func(m *ckptMeta) { m.Model.NLayer, m.Options.NLayer = 1e9, 1e9 }},
		{"NEmbd 2^30", "n_embd=1073741824 is out of range", func(m *ckptMeta) { m.Model.NEmbd, m.Options.NEmbd = 1<<30, 1<<30 }},
		{"BlockSize 2^40", "block_size=1099511627776 is out of range", func(m *ckptMeta) { m.Model.BlockSize, m.Options.BlockSize = 1<<40, 1<<40 }},
		{"BatchSize 1e9", "batch_size=1000000000 is out of range", func(m *ckptMeta) { m.Options.BatchSize = 1e9 }},
		{"NumSamples 1e9", "num_samples=1000000000 is out of range", func(m *ckptMeta) { m.Options.NumSamples = 1e9 }},
	}
	for i, b := range bad {
		dir := filepath.Join(tmp, "bad", string(rune('a'+i)))
		fakeCheckpoint(t, dir, b.mutate)
		want := []string{"checkpoint " + filepath.Join(dir, ckptName) + " is corrupt", b.want}
		cases = append(cases,
			tc{"sample " + b.name, []string{"sample", "--out_dir=" + dir}, want},
			tc{"resume " + b.name, []string{"--resume", "--out_dir=" + dir, "--data=testdata/tiny.txt"}, want})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stderr, code, wall, rss := runBinary(t, c.args...)
			t.Logf("%v, max RSS %.1f MB: %s", wall.Round(time.Millisecond), float64(rss)/1e6, strings.TrimSpace(stderr))
			if code != 1 {
				t.Errorf("exit status %d, want 1", code)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "train: ") {
				t.Errorf("stderr is not one line starting with \"train: \": %q", stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not mention %q", w)
				}
			}
			if rss >= 100e6 {
				t.Errorf("max RSS %d bytes, want < 100 MB", rss)
			}
			if wall > 10*time.Second {
				t.Errorf("took %v, want well under a second", wall)
			}
		})
	}
	// the same writer with sane metadata gives checkpoints that work, so
	// the failures above come from the sizes alone
	if stderr, code, _, _ := runBinary(t, "sample", "--out_dir="+filepath.Join(tmp, "good"), "--num_tokens=5"); code != 0 {
		t.Errorf("sample from the good fake checkpoint: exit %d: %s", code, stderr)
	}
	stderr, code, wall, rss := runBinary(t, "--resume", "--out_dir="+filepath.Join(tmp, "good"), "--data=testdata/tiny.txt",
		"--max_iters=2", "--eval_iters=1", "--num_tokens=5")
	if code != 0 {
		t.Errorf("resume from the good fake checkpoint: exit %d: %s", code, stderr)
	}
	t.Logf("resume from the good fake checkpoint: %v, max RSS %.1f MB", wall.Round(time.Millisecond), float64(rss)/1e6)
}

// TestParamCount checks the estimate's parameter count against the model
// that nn builds.
func TestParamCount(t *testing.T) {
	for _, c := range []nn.GPTConfig{
		{VocabSize: 65, BlockSize: 64, NLayer: 4, NHead: 4, NEmbd: 128},
		{VocabSize: 50, BlockSize: 16, NLayer: 2, NHead: 2, NEmbd: 16, Bias: true},
		{VocabSize: 7, BlockSize: 3, NLayer: 1, NHead: 1, NEmbd: 8, Dropout: 0.1},
	} {
		if got, want := paramCount(c), nn.NumParams(nn.NewGPT(c)); got != float64(want) {
			t.Errorf("paramCount(%+v) = %v, nn.NumParams = %d", c, got, want)
		}
	}
}

// TestParseByteSize checks --max_memory's syntax.
func TestParseByteSize(t *testing.T) {
	good := map[string]int64{"8GiB": 8 << 30, "512MiB": 512 << 20, "512mib": 512 << 20, "2GB": 2e9, "1048576": 1 << 20,
		"1.5GiB": 3 << 29, "64 KiB": 64 << 10, "100B": 100, "auto": 0, "1TB": 1e12}
	for s, want := range good {
		if got, err := parseByteSize(s); err != nil || got != want {
			t.Errorf("parseByteSize(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "0", "-1GiB", "GiB", "12x", "NaN", "1e30", "9223372036854775807", "0.5", "1.5", "0.1B"} {
		if got, err := parseByteSize(s); err == nil {
			t.Errorf("parseByteSize(%q) = %d, want an error", s, got)
		}
	}
}
