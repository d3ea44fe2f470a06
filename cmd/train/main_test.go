package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wickml/wick/cuda"
)

// tinyArgs is a model small enough for a few dozen iterations in well under
// a second on one core.
func tinyArgs(outDir string, extra ...string) []string {
	args := []string{"--data=testdata/tiny.txt", "--out_dir=" + outDir,
		"--n_layer=1", "--n_head=2", "--n_embd=16", "--block_size=16", "--batch_size=4",
		"--learning_rate=3e-3", "--min_lr=3e-4", "--warmup_iters=5", "--lr_decay_iters=40",
		"--eval_iters=2", "--log_interval=1", "--num_tokens=20"}
	return append(args, extra...)
}

// runCLI calls run in-process and returns its output and exit status.
func runCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return o.String(), e.String(), code
}

// cudaCase is TestBadInput's case for --device=cuda in this build: without
// the cuda tag, and with it on a machine without a usable GPU, asking for
// cuda fails with the reason; with a GPU, asking for a GPU that does not
// exist fails.
func cudaCase(outDir string) (name string, args []string, want string) {
	switch {
	case !cuda.Built:
		return "cuda without GPU build", tinyArgs(outDir, "--device=cuda"), "built without GPU support"
	case !cuda.Available():
		// such as "device cuda:0: cuda: the NVIDIA driver found no
		// usable GPU (cuInit: CUDA_ERROR_NO_DEVICE)"
		_, err := cuda.Open(0)
		return "cuda without a usable GPU", tinyArgs(outDir, "--device=cuda"), strings.TrimPrefix(err.Error(), "tensor: ")
	default:
		return "cuda device out of range", tinyArgs(outDir, "--device=cuda:99"), "no device cuda:99"
	}
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("train %s: exit %d, stderr: %s\nstdout: %s", strings.Join(args, " "), code, errOut, out)
	}
	return out
}

// readLog returns the records of dir/log.jsonl.
func readLog(t *testing.T, dir string) []logRecord {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "log.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var recs []logRecord
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r logRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		recs = append(recs, r)
	}
	return recs
}

// trainLosses maps iteration → training loss of the log's train records.
func trainLosses(recs []logRecord) map[int]float64 {
	m := map[int]float64{}
	for _, r := range recs {
		if r.Kind == "train" {
			m[r.Iter] = *r.Loss
		}
	}
	return m
}

func evals(recs []logRecord) []logRecord {
	var out []logRecord
	for _, r := range recs {
		if r.Kind == "eval" {
			out = append(out, r)
		}
	}
	return out
}

func TestEndToEnd(t *testing.T) {
	dir := t.TempDir()
	out := mustRun(t, tinyArgs(dir, "--max_iters=40", "--eval_interval=10", "--prompt=The river")...)
	for _, want := range []string{"step 0: train loss", "step 40:", "iter 39: loss", "tokens/s", "sample (prompt \"The river\"", "\nThe river"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	// The checkpoint holds the model, optimizer, tokenizer and state.
	sd, meta, err := readCheckpoint(filepath.Join(dir, ckptName))
	if err != nil {
		t.Fatal(err)
	}
	if meta.Iter == 0 || meta.BestVal == nil || len(meta.RNGGlobal) == 0 || len(meta.RNGSampler) == 0 || meta.Options.NLayer != 1 {
		t.Errorf("checkpoint meta incomplete: %+v", meta)
	}
	for _, name := range []string{"transformer.wte.weight", "lm_head.weight", "transformer.h.0.attn.c_attn.weight", "optimizer.state.0.exp_avg", "optimizer.state.0.exp_avg_sq"} {
		if _, ok := sd[name]; !ok {
			t.Errorf("checkpoint lacks tensor %s (has %v)", name, sd.Names())
		}
	}
	// The log has every step and every evaluation, and the loss fell.
	recs := readLog(t, dir)
	if n := len(trainLosses(recs)); n != 40 {
		t.Errorf("log has %d train records, want 40", n)
	}
	ev := evals(recs)
	if len(ev) != 5 {
		t.Fatalf("log has %d eval records, want 5 (iterations 0, 10, …, 40)", len(ev))
	}
	first, last := *ev[0].ValLoss, *ev[len(ev)-1].ValLoss
	if !(last < first-0.3) {
		t.Errorf("val loss did not fall: %.4f → %.4f", first, last)
	}
	if *meta.BestVal > first {
		t.Errorf("best val %.4f above the first %.4f", *meta.BestVal, first)
	}
	// Pictures and sample.
	svg, err := os.ReadFile(filepath.Join(dir, "loss.svg"))
	if err != nil || !bytes.Contains(svg, []byte("<svg")) {
		t.Errorf("loss.svg: %v, %.40q", err, svg)
	}
	png, err := os.ReadFile(filepath.Join(dir, "loss.png"))
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("loss.png: %v, %.10q", err, png)
	}
	sample, err := os.ReadFile(filepath.Join(dir, "sample.txt"))
	if err != nil || !strings.HasPrefix(string(sample), "The river") || len(sample) < len("The river")+10 {
		t.Errorf("sample.txt: %v, %q", err, sample)
	}
	// The sample command reads the checkpoint.
	out = mustRun(t, "sample", "--out_dir="+dir, "--prompt=In winter", "--num_tokens=30", "--num_samples=2", "--top_k=5")
	if parts := strings.Split(out, "\n---------------\n"); len(parts) != 2 || !strings.HasPrefix(parts[0], "In winter") || !strings.HasPrefix(parts[1], "In winter") {
		t.Errorf("sample output: %q", out)
	}
	// Same seed, same text.
	if again := mustRun(t, "sample", "--out_dir="+dir, "--prompt=In winter", "--num_tokens=30", "--num_samples=2", "--top_k=5"); again != out {
		t.Errorf("sampling twice with one seed differs:\n%q\n%q", out, again)
	}
}

func TestEndToEndBPE(t *testing.T) {
	dir := t.TempDir()
	out := mustRun(t, tinyArgs(dir, "--tokenizer=bpe", "--vocab_size=320", "--max_iters=10", "--eval_interval=5", "--prompt=The", "--gradient_accumulation_steps=2")...)
	if !strings.Contains(out, "bpe tokenizer with 320 tokens") {
		t.Errorf("stdout: %s", out)
	}
	got := mustRun(t, "sample", "--out_dir="+dir, "--prompt=At night", "--num_tokens=10")
	if !strings.HasPrefix(got, "At night") {
		t.Errorf("bpe sample: %q", got)
	}
}

// TestResumeEquality checks that a run stopped and resumed logs the same
// losses, step for step, as an uninterrupted run (with dropout, so that the
// global generator's state matters too).
func TestResumeEquality(t *testing.T) {
	common := []string{"--eval_interval=10", "--dropout=0.1", "--lr_decay_iters=30"}
	full := t.TempDir()
	mustRun(t, tinyArgs(full, append(common, "--max_iters=30")...)...)
	split := t.TempDir()
	mustRun(t, tinyArgs(split, append(common, "--max_iters=20", "--always_save_checkpoint")...)...)
	// The resumed run takes its other flags from the checkpoint.
	out := mustRun(t, "--resume", "--out_dir="+split, "--max_iters=30")
	if !strings.Contains(out, "resuming at iteration 20") {
		t.Fatalf("resume output: %s", out)
	}
	a, b := readLog(t, full), readLog(t, split)
	la, lb := trainLosses(a), trainLosses(b)
	if len(la) != 30 || len(lb) != 30 {
		t.Fatalf("train records: %d uninterrupted, %d resumed; want 30 each", len(la), len(lb))
	}
	for it := range 30 {
		if la[it] != lb[it] {
			t.Errorf("iteration %d: loss %v uninterrupted, %v resumed", it, la[it], lb[it])
		}
	}
	ea, eb := evals(a), evals(b)
	if len(ea) != len(eb) {
		t.Fatalf("eval records: %d vs %d", len(ea), len(eb))
	}
	for i := range ea {
		if *ea[i].ValLoss != *eb[i].ValLoss || ea[i].Iter != eb[i].Iter {
			t.Errorf("eval %d: %v@%d vs %v@%d", i, *ea[i].ValLoss, ea[i].Iter, *eb[i].ValLoss, eb[i].Iter)
		}
	}
	// --eval_only evaluates the checkpoint (saved at 30, as the resumed
	// run inherited --always_save_checkpoint) again, the same way, and
	// writes nothing.
	before := snapshot(t, split)
	out = mustRun(t, "--resume", "--eval_only", "--out_dir="+split)
	last := eb[len(eb)-1]
	if want := fmt.Sprintf("step 30: train loss %.4f (ppl %.2f), val loss %.4f", *last.TrainLoss, last.TrainPPL, *last.ValLoss); !strings.Contains(out, want) {
		t.Errorf("eval_only output lacks %q:\n%s", want, out)
	}
	after := snapshot(t, split)
	for p, h := range before {
		if after[p] != h {
			t.Errorf("--eval_only changed %s", p)
		}
	}
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// trainBinary builds the command once per test process.
func trainBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "wick-train-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "train")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// TestInterrupt sends SIGINT to a training process: it must save a
// checkpoint and exit with status 130, and resuming from that checkpoint must give the
// losses of an uninterrupted run.
func TestInterrupt(t *testing.T) {
	bin := trainBinary(t)
	dir := t.TempDir()
	common := []string{"--dropout=0.1", "--lr_decay_iters=200", "--eval_interval=1000"}
	cmd := exec.Command(bin, tinyArgs(dir, append(common, "--max_iters=1000000")...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	var lines []string
	sent := false
	timer := time.AfterFunc(30*time.Second, func() { cmd.Process.Kill() })
	defer timer.Stop()
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if !sent && strings.HasPrefix(sc.Text(), "iter 5:") {
			if err := cmd.Process.Signal(os.Interrupt); err != nil {
				t.Fatal(err)
			}
			sent = true
		}
	}
	err = cmd.Wait()
	if !sent || cmd.ProcessState.ExitCode() != 130 {
		t.Fatalf("sent SIGINT: %v; exit: %v; stderr: %s; stdout:\n%s", sent, err, stderr.String(), strings.Join(lines, "\n"))
	}
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "interrupted at iteration ") {
		t.Errorf("last line %q, want the interrupt message", last)
	}
	_, meta, err := readCheckpoint(filepath.Join(dir, ckptName))
	if err != nil {
		t.Fatal(err)
	}
	k := meta.Iter
	if k < 6 {
		t.Fatalf("checkpoint at iteration %d, want ≥ 6", k)
	}
	// Resume for 5 more steps and compare with an uninterrupted run.
	end := fmt.Sprint("--max_iters=", k+5)
	mustRun(t, "--resume", "--out_dir="+dir, end)
	ref := t.TempDir()
	mustRun(t, tinyArgs(ref, append(common, end)...)...)
	got, want := trainLosses(readLog(t, dir)), trainLosses(readLog(t, ref))
	for it := range k + 5 {
		if got[it] != want[it] {
			t.Errorf("iteration %d: loss %v after interrupt+resume, %v uninterrupted", it, got[it], want[it])
		}
	}
}

// snapshot returns the names and contents' hashes of the files under dir.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			b, _ := os.ReadFile(p)
			m[p] = fmt.Sprintf("%x", sha256.Sum256(b))
		}
		return nil
	})
	return m
}

func writeFile(t *testing.T, path string, b []byte) string {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestBadInput checks that each bad input gives one line on stderr naming
// the problem, exit status 1, and leaves out_dir as it was.
func TestBadInput(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("HF_HUB_CACHE", filepath.Join(tmp, "no-hub-cache"))
	good := filepath.Join(tmp, "good")
	mustRun(t, tinyArgs(good, "--max_iters=4", "--eval_interval=2")...)
	tiny, err := os.ReadFile("testdata/tiny.txt")
	if err != nil {
		t.Fatal(err)
	}
	ckpt, err := os.ReadFile(filepath.Join(good, ckptName))
	if err != nil {
		t.Fatal(err)
	}
	corrupt := func(name string, b []byte) string {
		d := filepath.Join(tmp, name)
		os.MkdirAll(d, 0o755)
		writeFile(t, filepath.Join(d, ckptName), b)
		return d
	}
	garbage := corrupt("garbage", []byte("this is not a checkpoint at all, just text"))
	truncated := corrupt("truncated", ckpt[:len(ckpt)/2])
	flipped := bytes.Clone(ckpt)
	copy(flipped[8:], `{"oops`)
	badHeader := corrupt("badheader", flipped)
	empty := writeFile(t, filepath.Join(tmp, "empty.txt"), nil)
	binary := writeFile(t, filepath.Join(tmp, "binary.bin"), []byte("abc\x00\x01\x02def"))
	latin1 := writeFile(t, filepath.Join(tmp, "latin1.txt"), []byte("caf\xe9 au lait, encore un caf\xe9"))
	short := writeFile(t, filepath.Join(tmp, "short.txt"), []byte("too short for a block of 16 tokens\n"))
	newChars := writeFile(t, filepath.Join(tmp, "snow.txt"), append(bytes.Clone(tiny), "☃ Zebra\n"...))
	aFile := writeFile(t, filepath.Join(tmp, "a-file"), []byte("x"))

	cudaName, cudaArgs, cudaWant := cudaCase(good)
	cases := []struct {
		name string
		args []string
		want string // a substring of the one-line message
	}{
		{"missing data", tinyArgs(good, "--data="+filepath.Join(tmp, "nope.txt")), "does not exist"},
		{"data is a directory", tinyArgs(good, "--data="+tmp), "is a directory"},
		{"empty data", tinyArgs(good, "--data="+empty), "is empty"},
		{"binary data", tinyArgs(good, "--data="+binary), "not a text file"},
		{"not UTF-8", tinyArgs(good, "--data="+latin1), "not UTF-8"},
		{"corpus too short", tinyArgs(good, "--data="+short), "block_size+1"},
		{"n_embd not divisible", tinyArgs(good, "--n_embd=15"), "not divisible by --n_head=2"},
		{"negative n_layer", tinyArgs(good, "--n_layer=-2"), "--n_layer must be positive"},
		{"zero batch", tinyArgs(good, "--batch_size=0"), "--batch_size must be positive"},
		{"negative max_iters", tinyArgs(good, "--max_iters=-1"), "--max_iters must be ≥ 0"},
		{"dropout 1.5", tinyArgs(good, "--dropout=1.5"), "--dropout"},
		{"NaN learning rate", tinyArgs(good, "--learning_rate=NaN"), "--learning_rate"},
		{"unknown tokenizer", tinyArgs(good, "--tokenizer=word"), "--tokenizer=word is unknown"},
		{"bpe vocab too small", tinyArgs(good, "--tokenizer=bpe", "--vocab_size=100"), "--vocab_size=100"},
		{"unknown device", tinyArgs(good, "--device=tpu"), `unknown device "tpu"`},
		{cudaName, cudaArgs, cudaWant},
		{"float16", tinyArgs(good, "--dtype=float16", "--device=cpu"), "--dtype=float16 does not train on the cpu"},
		{"unknown flag", tinyArgs(good, "--n_layers=3"), "unknown flag --n_layers"},
		{"bad int", tinyArgs(good, "--n_layer=four"), `invalid value "four" for flag --n_layer`},
		{"stray argument", tinyArgs(good, "extra"), `config file extra does not exist`},
		{"stray assignment", tinyArgs(good, "n_layer=2"), `unexpected argument "n_layer=2"`},
		{"init_from gpt2 not cached", tinyArgs(good, "--init_from=gpt2"), "--init_from=gpt2: no snapshot in the Hugging Face cache"},
		{"out_dir is a file", tinyArgs(aFile), "--out_dir"},
		{"resume without checkpoint", tinyArgs(filepath.Join(tmp, "none"), "--resume"), "no checkpoint at"},
		{"resume config mismatch", []string{"--resume", "--out_dir=" + good, "--n_layer=2"}, "--n_layer=2 does not match the checkpoint"},
		{"resume block mismatch", []string{"--resume", "--out_dir=" + good, "--block_size=8"}, "--block_size=8 does not match"},
		{"resume tokenizer mismatch", []string{"--resume", "--out_dir=" + good, "--tokenizer=bpe"}, "--tokenizer=bpe does not match"},
		{"resume data outside vocabulary", []string{"--resume", "--out_dir=" + good, "--data=" + newChars}, "tokenizer mismatch"},
		{"garbage checkpoint", []string{"--resume", "--out_dir=" + garbage}, "is corrupt"},
		{"truncated checkpoint", []string{"--resume", "--out_dir=" + truncated}, "is corrupt"},
		{"bad checkpoint header", []string{"--resume", "--out_dir=" + badHeader}, "is corrupt"},
		{"sample corrupt checkpoint", []string{"sample", "--out_dir=" + truncated}, "is corrupt"},
		{"sample no checkpoint", []string{"sample", "--out_dir=" + filepath.Join(tmp, "none")}, "no checkpoint at"},
		{"sample tiny temperature", []string{"sample", "--out_dir=" + good, "--temperature=1e-300"}, "--temperature=1e-300 is below the smallest temperature"},
		{"sample denormal temperature", []string{"sample", "--out_dir=" + good, "--temperature=1e-45"}, "--temperature=1e-45 is below"},
		{"sample negative temperature", []string{"sample", "--out_dir=" + good, "--temperature=-1"}, "--temperature=-1: want 0 (greedy)"},
		{"train tiny temperature", tinyArgs(good, "--temperature=1e-300"), "--temperature=1e-300 is below"},
		{"max_memory without unit", tinyArgs(good, "--max_memory=0.5"), "--max_memory"},
		{"sample infinite temperature", []string{"sample", "--out_dir=" + good, "--temperature=+Inf"}, "--temperature"},
		{"sample prompt outside vocabulary", []string{"sample", "--out_dir=" + good, "--prompt=☃"}, "--prompt: character '☃'"},
	}
	before := snapshot(t, tmp)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := runCLI(t, c.args...)
			if code != 1 {
				t.Errorf("exit %d, want 1; stdout: %s", code, out)
			}
			if strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "train: ") {
				t.Errorf("stderr is not one line starting with \"train: \": %q", errOut)
			}
			if !strings.Contains(errOut, c.want) {
				t.Errorf("stderr %q does not name the problem (%q)", errOut, c.want)
			}
			if strings.Contains(errOut, "goroutine") || strings.Contains(errOut, "panic") {
				t.Errorf("stack trace on stderr: %q", errOut)
			}
		})
	}
	after := snapshot(t, tmp)
	for p, h := range before {
		if after[p] != h {
			t.Errorf("%s was changed or removed by a failed run", p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s was created by a failed run", p)
		}
	}
}

// TestDivergence checks that a NaN loss stops the run with one line and
// keeps the last good checkpoint untouched.
func TestDivergence(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, tinyArgs(dir, "--max_iters=4", "--eval_interval=2")...)
	ckpt := filepath.Join(dir, ckptName)
	before, _ := os.ReadFile(ckpt)
	out, errOut, code := runCLI(t, "--resume", "--out_dir="+dir, "--max_iters=40", "--learning_rate=1e30", "--decay_lr=false", "--grad_clip=0")
	if code != 1 || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "diverged") || !strings.Contains(errOut, "last good checkpoint (iteration 4)") {
		t.Fatalf("exit %d, stderr %q, stdout %s", code, errOut, out)
	}
	after, _ := os.ReadFile(ckpt)
	if !bytes.Equal(before, after) {
		t.Error("the checkpoint changed after divergence")
	}
}

// TestHelp checks that --help lists every flag with its default and exits 0.
func TestHelp(t *testing.T) {
	for _, sample := range []bool{false, true} {
		args := []string{"--help"}
		if sample {
			args = []string{"sample", "-h"}
		}
		out, errOut, code := runCLI(t, args...)
		if code != 0 || errOut != "" {
			t.Fatalf("%v: exit %d, stderr %q", args, code, errOut)
		}
		fs, _ := newFlagSet(defaultOptions(), sample)
		fs.VisitAll(func(f *flag.Flag) {
			def := f.DefValue
			if def == "" {
				def = `""`
			}
			if want := "  --" + f.Name + "=" + def + "\n        " + f.Usage; !strings.Contains(out, want) {
				t.Errorf("%v: help lacks %q", args, want)
			}
		})
	}
}

// TestSIGTERM checks that SIGTERM, like Ctrl-C, saves a checkpoint; the
// exit status is 143.
func TestSIGTERM(t *testing.T) {
	bin := trainBinary(t)
	dir := t.TempDir()
	cmd := exec.Command(bin, tinyArgs(dir, "--max_iters=1000000", "--eval_interval=1000")...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(30*time.Second, func() { cmd.Process.Kill() })
	defer timer.Stop()
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "iter 2:") {
			cmd.Process.Signal(syscall.SIGTERM)
			break
		}
	}
	io.Copy(io.Discard, stdout)
	if err := cmd.Wait(); cmd.ProcessState.ExitCode() != 143 {
		t.Fatalf("exit after SIGTERM: %v, want status 143", err)
	}
	if _, meta, err := readCheckpoint(filepath.Join(dir, ckptName)); err != nil || meta.Iter < 3 {
		t.Fatalf("checkpoint after SIGTERM: %v %+v", err, meta)
	}
}
