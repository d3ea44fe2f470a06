package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// parseArgs parses args as the train (sample=false) or sample command does.
func parseArgs(t *testing.T, sample bool, args ...string) (*options, error) {
	t.Helper()
	o := defaultOptions()
	fs, _ := newFlagSet(o, sample)
	return o, parseFlags(fs, o, args)
}

// TestConfigExpressions checks the Python subset against values printed by
// Python 3 for the same expressions.
func TestConfigExpressions(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, filepath.Join(dir, "c.py"), []byte(`import time
# a comment line, then nanoGPT's own forms
gradient_accumulation_steps = 5 * 8
weight_decay = 1e-1
wandb_run_name = 'ft-' + str(time.time())
wandb_project='owt'   # no spaces around =
n_head = 3
n_embd = n_head * 64 + 2**3 - -7 % 3   # 192 + 8 - 2
batch_size = (7 // -2) * -1_0 // 4     # -4 * -10 // 4
max_iters = 10**15
learning_rate = 1e-3/10
min_lr = learning_rate / 10
beta1 = 3 / 2 - 1
decay_lr = False
bias = True
dropout = 0
prompt = "say \"hi\"\n" 'and more' + str(1.5e-05) + str(1e16) + str(123456.0) + str(int(2.9)) + str(float(3))
warmup_iters = 0x10
`))
	o, err := parseArgs(t, false, cfg, "--beta2=0.95")
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"gradient_accumulation_steps", o.GradAccum, 40},
		{"weight_decay", o.WeightDecay, 0.1},
		{"wandb_project", o.WandbProject, "owt"},
		{"n_embd", o.NEmbd, 198},
		{"batch_size", o.BatchSize, 10},
		{"max_iters", o.MaxIters, 1000000000000000},
		{"learning_rate", o.LearningRate, 1e-3 / 10},
		{"min_lr", o.MinLR, 1e-3 / 10 / 10},
		{"beta1", o.Beta1, 0.5},
		{"beta2", o.Beta2, 0.95},
		{"decay_lr", o.DecayLR, false},
		{"bias", o.Bias, true},
		{"dropout", o.Dropout, 0.0},
		{"prompt", o.Prompt, "say \"hi\"\nand more1.5e-051e+16123456.023.0"},
		{"warmup_iters", o.WarmupIters, 16},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %#v, want %#v", c.name, c.got, c.want)
		}
	}
	if !strings.HasPrefix(o.WandbRunName, "ft-1") || len(o.WandbRunName) < 12 {
		t.Errorf("wandb_run_name = %q, want ft- and the Unix time", o.WandbRunName)
	}
	if !o.explicitFlags["n_embd"] || o.explicitFlags["n_layer"] {
		t.Errorf("explicit flags %v: want those of the config file and the command line", o.explicitFlags)
	}
}

// TestConfigOrder checks that arguments apply in order, as in nanoGPT's
// configurator: a flag before a config file is overridden by it, a flag
// after it overrides it, and a later file overrides an earlier one.
func TestConfigOrder(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, filepath.Join(dir, "a.py"), []byte("batch_size = 64\nn_layer = 6\nn_head = 6\n"))
	b := writeFile(t, filepath.Join(dir, "b.py"), []byte("n_head = 2\n"))
	o, err := parseArgs(t, false, "--batch_size=3", "--n_layer", "3", a, "--n_layer=1", b, "--seed", "7")
	if err != nil {
		t.Fatal(err)
	}
	if o.BatchSize != 64 || o.NLayer != 1 || o.NHead != 2 || o.Seed != 7 {
		t.Errorf("batch_size %d n_layer %d n_head %d seed %d, want 64 1 2 7", o.BatchSize, o.NLayer, o.NHead, o.Seed)
	}
}

// TestDatasetFlag checks --dataset's mapping to a text file and its order
// with --data.
func TestDatasetFlag(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	os.MkdirAll(filepath.Join("data", "shakespeare_char"), 0o755)
	writeFile(t, filepath.Join("data", "shakespeare_char", "input.txt"), []byte("x"))
	os.MkdirAll(filepath.Join(dir, "folder"), 0o755)
	writeFile(t, filepath.Join(dir, "folder", "input.txt"), []byte("x"))
	file := writeFile(t, filepath.Join(dir, "corpus.txt"), []byte("x"))
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--dataset=shakespeare_char"}, filepath.Join("data", "shakespeare_char", "input.txt")},
		{[]string{"--dataset=" + filepath.Join(dir, "folder")}, filepath.Join(dir, "folder", "input.txt")},
		{[]string{"--dataset=folder"}, filepath.Join("folder", "input.txt")},
		{[]string{"--dataset=" + file}, file},
		{[]string{"--dataset=shakespeare_char", "--data=" + file}, file},
		{[]string{"--data=" + file, "--dataset=shakespeare_char"}, filepath.Join("data", "shakespeare_char", "input.txt")},
		{[]string{"--dataset=nope", "--data=" + file}, file},
		{[]string{"--dataset=nope", "--dataset="}, ""},
	}
	for _, c := range cases {
		o, err := parseArgs(t, false, c.args...)
		if err == nil {
			err = o.validate()
		}
		if err != nil {
			t.Errorf("%v: %v", c.args, err)
		} else if o.Data != c.want || o.binDir != "" {
			t.Errorf("%v: data %q (prepared %q), want %q", c.args, o.Data, o.binDir, c.want)
		}
	}
	// nanoGPT's prepared train.bin and val.bin come before input.txt, as
	// train.py reads them
	os.MkdirAll(filepath.Join("data", "owt"), 0o755)
	for _, n := range []string{"train.bin", "val.bin"} {
		writeFile(t, filepath.Join("data", "shakespeare_char", n), []byte{1, 0})
		writeFile(t, filepath.Join("data", "owt", n), []byte{1, 0})
	}
	for name, want := range map[string]string{"shakespeare_char": filepath.Join("data", "shakespeare_char"), "owt": filepath.Join("data", "owt"), filepath.Join(dir, "data", "owt"): filepath.Join(dir, "data", "owt")} {
		o, err := parseArgs(t, false, "--dataset="+name)
		if err == nil {
			err = o.validate()
		}
		if err != nil || o.binDir != want || o.Data != "" {
			t.Errorf("--dataset=%s: prepared %q, data %q (%v), want prepared %q", name, o.binDir, o.Data, err, want)
		}
	}
	// openwebtext: nanoGPT's prepare.py writes train.bin and val.bin
	os.MkdirAll(filepath.Join("data", "openwebtext"), 0o755)
	o, err := parseArgs(t, false, "--dataset=openwebtext")
	if err == nil {
		err = o.validate()
	}
	if want := "--dataset=openwebtext: folder " + filepath.Join("data", "openwebtext") + " has neither nanoGPT's train.bin and val.bin nor an input.txt (nanoGPT's " + filepath.Join("data", "openwebtext", "prepare.py") + " writes train.bin and val.bin there; or give --data=FILE)"; err == nil || err.Error() != want {
		t.Errorf("--dataset=openwebtext without its files: %v\nwant %s", err, want)
	}
}

// TestNanoGPTConfig runs nanoGPT's config/train_shakespeare_char.py as
// nanoGPT's README does, from a folder with data/shakespeare_char/input.txt,
// overriding max_iters and the model size so that it is quick.
func TestNanoGPTConfig(t *testing.T) {
	cfg, err := filepath.Abs("testdata/nanogpt/train_shakespeare_char.py")
	if err != nil {
		t.Fatal(err)
	}
	tiny, err := os.ReadFile("testdata/tiny.txt")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	os.MkdirAll(filepath.Join("data", "shakespeare_char"), 0o755)
	writeFile(t, filepath.Join("data", "shakespeare_char", "input.txt"), tiny)
	out, errOut, code := runCLI(t, cfg, "--device=cpu", "--max_iters=3", "--wandb_log=True",
		"--n_layer=1", "--n_head=2", "--n_embd=16", "--block_size=16", "--batch_size=4", "--eval_iters=1", "--num_tokens=5")
	if code != 0 {
		t.Fatalf("exit %d, stderr: %s\nstdout: %s", code, errOut, out)
	}
	want := "train: note: --wandb_log: Wick does not log to Weights & Biases; the log goes to " + filepath.Join("out-shakespeare-char", "log.jsonl") + "\n"
	if errOut != want {
		t.Errorf("stderr %q, want %q", errOut, want)
	}
	// out_dir comes from the config file
	_, meta, err := readCheckpoint(filepath.Join("out-shakespeare-char", ckptName))
	if err != nil {
		t.Fatal(err)
	}
	o := meta.Options
	checks := []struct {
		name      string
		got, want any
	}{
		{"iterations", meta.Iter, 3},
		{"data", o.Data, filepath.Join("data", "shakespeare_char", "input.txt")},
		{"eval_interval", o.EvalInterval, 250},
		{"log_interval", o.LogInterval, 10},
		{"always_save_checkpoint", o.AlwaysSave, false},
		{"wandb_project", o.WandbProject, "shakespeare-char"},
		{"wandb_run_name", o.WandbRunName, "mini-gpt"},
		{"gradient_accumulation_steps", o.GradAccum, 1},
		{"dropout", o.Dropout, 0.2},
		{"learning_rate", o.LearningRate, 1e-3},
		{"lr_decay_iters", o.LRDecayIters, 5000},
		{"min_lr", o.MinLR, 1e-4},
		{"beta2", o.Beta2, 0.99},
		{"warmup_iters", o.WarmupIters, 100},
		{"n_layer (overridden)", meta.Model.NLayer, 1},
		{"block_size (overridden)", meta.Model.BlockSize, 16},
		{"eval_iters (overridden)", o.EvalIters, 1},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %#v, want %#v", c.name, c.got, c.want)
		}
	}

	// train sample reads out_dir from the same file and skips its train keys
	prompt := writeFile(t, "prompt.txt", []byte("The river"))
	out, errOut, code = runCLI(t, "sample", cfg, "--device=cpu", "--start=FILE:"+prompt, "--num_tokens=4")
	if code != 0 {
		t.Fatalf("sample: exit %d, stderr: %s", code, errOut)
	}
	if !strings.HasPrefix(out, "The river") || len([]rune(strings.TrimSuffix(out, "\n"))) != len("The river")+4 {
		t.Errorf("sample %q, want the prompt and 4 more characters", out)
	}
}

// TestBadConfig checks that each bad config file or flag of this file's
// features gives one line on stderr naming the problem, exit status 1, and
// leaves out_dir untouched.
func TestBadConfig(t *testing.T) {
	dir := t.TempDir()
	cfg := func(name, text string) string {
		return writeFile(t, filepath.Join(dir, name), []byte(text))
	}
	unknown := cfg("unknown.py", "batch_size = 12\n\nn_layers = 4\n")
	badType := cfg("type.py", "n_layer = '4'\n")
	badBool := cfg("bool.py", "bias = 1\n")
	badFloat := cfg("float.py", "batch_size = 12.0\n")
	unparsable := cfg("parse.py", "# fine\nif True:\n")
	call := cfg("call.py", "import os\n")
	undefined := cfg("undefined.py", "n_layer = depth\n")
	unterminated := cfg("string.py", "out_dir = 'out\n")
	divide := cfg("divide.py", "n_layer = 4 // 0\n")
	indent := cfg("indent.py", "n_layer = 4\n  n_head = 2\n")
	noInput := filepath.Join(dir, "noinput")
	os.MkdirAll(noInput, 0o755)
	out := filepath.Join(dir, "out")
	cases := []struct {
		name string
		args []string
		want string // the whole line after "train: ", or its start when it ends in "…"
	}{
		{"unknown key", []string{unknown}, unknown + ":3: unknown key n_layers (see --help for the flags)"},
		{"string for an int", []string{badType}, badType + ":1: n_layer = '4': want an int, got a string"},
		{"int for a bool", []string{badBool}, badBool + ":1: bias = 1: want True or False, got an int"},
		{"float for an int", []string{badFloat}, badFloat + ":1: batch_size = 12.0: want an int, got a float"},
		{"unparsable line", []string{unparsable}, unparsable + `:2: cannot parse "if True:" (unexpected ":")`},
		{"import", []string{call}, call + `:1: unsupported statement "import os" (config files may import only time)`},
		{"undefined name", []string{undefined}, undefined + ":1: n_layer: name depth is not defined"},
		{"unterminated string", []string{unterminated}, unterminated + `:1: cannot parse "out_dir = 'out" (unterminated string)`},
		{"division by zero", []string{divide}, divide + ":1: n_layer: division by zero"},
		{"indented line", []string{indent}, indent + `:2: unexpected indent before "n_head = 2" (Python statements start in column 1)`},
		{"missing file", []string{filepath.Join(dir, "nope.py")}, "config file " + filepath.Join(dir, "nope.py") + " does not exist …"},
		{"sample: missing file", []string{"sample", filepath.Join(dir, "nope.py")}, "config file " + filepath.Join(dir, "nope.py") + " does not exist …"},
		{"sample: unknown key", []string{"sample", unknown}, unknown + ":3: unknown key n_layers (see --help for the flags)"},
		{"dataset folder without input.txt", []string{"--dataset=" + noInput}, "--dataset=" + noInput + ": folder " + noInput + " has neither nanoGPT's train.bin and val.bin nor an input.txt (give --data=FILE)"},
		{"dataset missing", []string{"--dataset=" + filepath.Join(dir, "nothing")}, "--dataset=" + filepath.Join(dir, "nothing") + ": no folder …"},
		{"start FILE: missing", []string{"--start=FILE:" + filepath.Join(dir, "p.txt")}, "--start=FILE:" + filepath.Join(dir, "p.txt") + ": the file does not exist"},
		{"sample: start FILE: missing", []string{"sample", "--start=FILE:" + filepath.Join(dir, "p.txt")}, "--start=FILE:" + filepath.Join(dir, "p.txt") + ": the file does not exist"},
		{"bad bool flag", []string{"--bias=maybe"}, `invalid boolean value "maybe" for --bias: parse error (see --help)`},
		{"flag without value", []string{"--n_layer"}, "flag needs an argument: --n_layer (see --help)"},
		{"bad wandb_log", []string{"--wandb_log=sure"}, `invalid boolean value "sure" for --wandb_log: parse error (see --help)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"--out_dir=" + out, "--data=testdata/tiny.txt"}, c.args...)
			if c.args[0] == "sample" { // sample has no --data
				args = append([]string{"sample", "--out_dir=" + out}, c.args[1:]...)
			}
			stdout, stderr, code := runCLI(t, args...)
			if code != 1 {
				t.Fatalf("exit %d, want 1; stderr %q", code, stderr)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "train: ") {
				t.Fatalf("stderr %q, want one line", stderr)
			}
			line := strings.TrimSuffix(strings.TrimPrefix(stderr, "train: "), "\n")
			if prefix, ok := strings.CutSuffix(c.want, " …"); ok {
				if !strings.HasPrefix(line, prefix) {
					t.Errorf("stderr %q, want it to start with %q", line, prefix)
				}
			} else if line != c.want {
				t.Errorf("stderr %q, want %q", line, c.want)
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("out_dir %s was created", out)
			}
		})
	}
}
