//go:build mpi

package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wickml/wick/nn"

	"github.com/wickml/wick/internal/approx"
)

// These tests run train built with -tags mpi under mpirun on this
// machine's loopback; .ci/run installs Open MPI where it is missing.

// mpiBins holds the binary each test built, in its temporary directory.
var mpiBins sync.Map // *testing.T → string

// mpiTrainBinary builds train with -tags mpi into the test's temporary
// directory (once per test; the build cache makes it a link).
func mpiTrainBinary(t *testing.T) string {
	t.Helper()
	if b, ok := mpiBins.Load(t); ok {
		return b.(string)
	}
	bin := filepath.Join(t.TempDir(), "train")
	if out, err := exec.Command("go", "build", "-tags", mpiBuildTags, "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build -tags mpi: %v\n%s", err, out)
	}
	mpiBins.Store(t, bin)
	return bin
}

// mpirunCmd returns the command that runs train with args on np ranks.
func mpirunCmd(t *testing.T, ctx context.Context, np int, args ...string) *exec.Cmd {
	t.Helper()
	bin, err := exec.LookPath("mpirun")
	if err != nil {
		t.Fatalf("these tests need mpirun on $PATH (apt-get install openmpi-bin): %v", err)
	}
	var pre []string
	vctx, vcancel := context.WithTimeout(ctx, 10*time.Second)
	defer vcancel()
	if v, _ := exec.CommandContext(vctx, bin, "--version").CombinedOutput(); bytes.Contains(v, []byte("Open MPI")) {
		pre = []string{"--allow-run-as-root", "--oversubscribe"}
	}
	all := append(append(pre, "-np", strconv.Itoa(np), mpiTrainBinary(t)), args...)
	return exec.CommandContext(ctx, bin, all...)
}

// distArgs is tinyArgs for a data-parallel run: 2 micro-batches per step
// (one per rank on 2 ranks), a checkpoint at every evaluation, plain log
// lines.
func distArgs(dir string, extra ...string) []string {
	return tinyArgs(dir, append([]string{"--gradient_accumulation_steps=2", "--always_save_checkpoint", "--num_samples=0", "--progress=plain", "--eval_interval=10"}, extra...)...)
}

// trainRanks runs train on np ranks (np = 1: the same binary without
// mpirun) and fails the test unless it exits 0.
func trainRanks(t *testing.T, np int, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var cmd *exec.Cmd
	if np == 1 {
		cmd = exec.CommandContext(ctx, mpiTrainBinary(t), args...)
	} else {
		cmd = mpirunCmd(t, ctx, np, args...)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("train on %d ranks %s: %v\n%s", np, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// compareRuns checks that two runs logged the same training losses (1e-5
// relative) and ended with the same weights (1e-5 relative to each
// tensor's largest element).
func compareRuns(t *testing.T, what, dirA, dirB string) {
	t.Helper()
	compareRunsExcept(t, what, dirA, dirB, nil)
}

// compareRunsExcept is compareRuns without comparing the weights for which
// skip(name, i) is true.
func compareRunsExcept(t *testing.T, what, dirA, dirB string, skip func(name string, i int) bool) {
	t.Helper()
	la, lb := trainLosses(readLog(t, dirA)), trainLosses(readLog(t, dirB))
	if len(la) == 0 || len(la) != len(lb) {
		t.Fatalf("%s: %d and %d logged steps", what, len(la), len(lb))
	}
	for it, a := range la {
		b, ok := lb[it]
		if !ok || !approx.Scalar(a, b, 1e-5, 0) {
			t.Errorf("%s: iteration %d: loss %v and %v (1e-5 relative)", what, it, a, b)
		}
	}
	sa, _, err := readCheckpoint(filepath.Join(dirA, ckptName))
	if err != nil {
		t.Fatal(err)
	}
	sb, _, err := readCheckpoint(filepath.Join(dirB, ckptName))
	if err != nil {
		t.Fatal(err)
	}
	for name, ta := range sa {
		if strings.HasPrefix(name, nn.OptimizerPrefix) {
			continue
		}
		a, b := ta.Float32s(), sb[name].Float32s()
		var scale float64
		for _, v := range b {
			scale = math.Max(scale, math.Abs(float64(v)))
		}
		for i := range a {
			if skip != nil && skip(name, i) {
				continue
			}
			if !approx.Scalar(float64(a[i]), float64(b[i]), 0, 1e-5*scale) {
				t.Fatalf("%s: %s[%d] = %v and %v (1e-5 relative to the largest, %v)", what, name, i, a[i], b[i], scale)
			}
		}
	}
}

// TestDistEqualsOneRank: 2 ranks of one micro-batch each take the steps of
// 1 rank with 2 micro-batches of the same samples.
func TestDistEqualsOneRank(t *testing.T) {
	one, two := t.TempDir(), t.TempDir()
	trainRanks(t, 1, distArgs(one, "--max_iters=20")...)
	out := trainRanks(t, 2, distArgs(two, "--max_iters=20")...)
	for _, want := range []string{"dist: world size 2 over mpi", "dist: rank 0: cpu", "dist: rank 1: cpu"} {
		if !strings.Contains(out, want) {
			t.Errorf("the output of 2 ranks lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "step 20: train loss"); n != 1 {
		t.Errorf("2 ranks printed the last evaluation %d times, want once (rank 0 reports):\n%s", n, out)
	}
	compareRuns(t, "1 rank × 2 micro-batches vs 2 ranks × 1", one, two)
}

// TestDistProgress: under mpirun, --progress=auto prints rank 0's plain
// log lines only, though Open MPI gives each rank a pseudo-terminal for its
// output; --progress=bar draws the bar when asked for.
func TestDistProgress(t *testing.T) {
	out := trainRanks(t, 2, distArgs(t.TempDir(), "--max_iters=6", "--progress=auto")...)
	if strings.Contains(out, "\033[K") || strings.Count(out, "iter 5: loss") != 1 || strings.Count(out, "step 6: train loss") != 1 {
		t.Errorf("2 ranks with --progress=auto: want rank 0's plain lines (iter 5 and step 6 once each) and no bar:\n%q", out)
	}
	out = trainRanks(t, 2, distArgs(t.TempDir(), "--max_iters=6", "--progress=bar")...)
	if !strings.Contains(out, "\033[K") || strings.Contains(out, "iter 5: loss") {
		t.Errorf("2 ranks with --progress=bar: want a bar:\n%q", out)
	}
}

// TestDistFineTune: fine-tuning a pretrained model on 2 ranks takes the
// steps of 1 rank with 2 micro-batches (every rank reads the model; rank
// 0's weights are broadcast).
func TestDistFineTune(t *testing.T) {
	hub := filepath.Join(t.TempDir(), "model")
	writeHubModel(t, hub, testVocab, 32, true)
	args := func(dir string) []string {
		return ftArgs(hub, dir, "--gradient_accumulation_steps=2", "--always_save_checkpoint", "--num_samples=0",
			"--progress=plain", "--eval_interval=5", "--block_size=16", "--max_iters=10")
	}
	one, two := t.TempDir(), t.TempDir()
	trainRanks(t, 1, args(one)...)
	out := trainRanks(t, 2, args(two)...)
	if !strings.Contains(out, "dist: world size 2 over mpi") || !strings.Contains(out, "gpt2 tokenizer") {
		t.Errorf("the output of 2 ranks lacks the world size or the tokenizer:\n%s", out)
	}
	// The key bias (c_attn.bias[C:2C]) adds the same q·b to every score of
	// a row, which softmax cancels: its gradient is rounding noise, which
	// AdamW's normalisation turns into steps of about learning_rate whose
	// sign depends on the order of the sums.
	keyBias := func(name string, i int) bool {
		const c = 16 // n_embd of writeHubModel
		return strings.HasSuffix(name, ".attn.c_attn.bias") && i >= c && i < 2*c
	}
	compareRunsExcept(t, "fine-tuning on 1 rank × 2 micro-batches vs 2 ranks × 1", one, two, keyBias)
}

// TestDistResumeAcrossWorldSizes: a checkpoint of 2 ranks resumes on 1, one
// of 1 rank resumes on 2, and both continue as the uninterrupted run.
func TestDistResumeAcrossWorldSizes(t *testing.T) {
	ref := t.TempDir()
	trainRanks(t, 1, distArgs(ref, "--max_iters=20")...)
	for _, c := range []struct{ first, then int }{{2, 1}, {1, 2}} {
		dir := t.TempDir()
		trainRanks(t, c.first, distArgs(dir, "--max_iters=10")...)
		trainRanks(t, c.then, distArgs(dir, "--max_iters=20", "--resume")...)
		compareRuns(t, fmt.Sprintf("saved on %d ranks, resumed on %d, vs uninterrupted", c.first, c.then), dir, ref)
	}
}

// TestDistRankKilled: SIGKILL one rank mid-training; the job ends within
// 30 s with a non-zero status, and the last checkpoint loads.
func TestDistRankKilled(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := mpirunCmd(t, ctx, 2, distArgs(dir, "--max_iters=1000000", "--eval_interval=5")...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pidRE := regexp.MustCompile(`^dist: rank 1: .* pid (\d+),`)
	pid := 0
	sc := bufio.NewScanner(stdout)
	var seen strings.Builder
	for sc.Scan() {
		line := sc.Text()
		seen.WriteString(line + "\n")
		if m := pidRE.FindStringSubmatch(line); m != nil {
			pid, _ = strconv.Atoi(m[1])
		}
		if strings.Contains(line, "step 10:") && strings.Contains(line, "saved") {
			break
		}
	}
	if pid == 0 {
		cmd.Process.Kill()
		t.Fatalf("no pid of rank 1 and no checkpoint in the output:\n%s", seen.String())
	}
	killed := time.Now()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill rank 1 (pid %d): %v", pid, err)
	}
	go func() { _, _ = bufio.NewReader(stdout).WriteTo(&bytes.Buffer{}) }()
	err = cmd.Wait()
	took := time.Since(killed)
	if err == nil {
		t.Fatalf("mpirun exited 0 after rank 1 was killed")
	}
	if took > 30*time.Second {
		t.Fatalf("the job ended %v after rank 1 was killed, want < 30s", took)
	}
	if _, meta, err := readCheckpoint(filepath.Join(dir, ckptName)); err != nil || meta.Iter < 10 {
		t.Fatalf("checkpoint after the kill: %v %+v", err, meta)
	}
	t.Logf("the job ended %v after SIGKILL of rank 1: %v", took.Round(time.Millisecond), err)
}

// TestDistMismatch: a rank started with another config stops the job at
// start with one line naming the difference, and a non-zero status.
func TestDistMismatch(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	args := distArgs(dir, "--max_iters=20")
	cmd := mpirunCmd(t, ctx, 1, args...)
	// MPMD: a second program, the same but for n_layer.
	cmd.Args = append(cmd.Args, ":", "-np", "1", mpiTrainBinary(t))
	cmd.Args = append(cmd.Args, append(distArgs(dir, "--max_iters=20"), "--n_layer=2")...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err == nil {
		t.Fatalf("mismatched ranks exited 0:\n%s%s", stdout.String(), stderr.String())
	}
	var lines []string
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.HasPrefix(l, "train:") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "rank 1 runs with n_layer=2 but rank 0 with n_layer=1") {
		t.Fatalf("want one line naming n_layer, got %q; stderr:\n%s", lines, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, ckptName)); err == nil {
		t.Fatalf("mismatched ranks saved a checkpoint")
	}
}

// TestDistSIGTERM: SIGTERM to every rank (what Slurm's scancel does) makes
// the ranks stop at the same step, rank 0 save a checkpoint of it, and the
// job exit with status 143, as one process would.
func TestDistSIGTERM(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := mpirunCmd(t, ctx, 2, distArgs(dir, "--max_iters=1000000", "--eval_interval=100000")...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pidRE := regexp.MustCompile(`^dist: rank \d+: .* pid (\d+),`)
	var pids []int
	var seen strings.Builder
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		seen.WriteString(line + "\n")
		if m := pidRE.FindStringSubmatch(line); m != nil {
			pid, _ := strconv.Atoi(m[1])
			pids = append(pids, pid)
		}
		if strings.HasPrefix(line, "iter 30:") {
			break
		}
	}
	if len(pids) != 2 {
		cmd.Process.Kill()
		t.Fatalf("want the pids of 2 ranks in the output:\n%s", seen.String())
	}
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGTERM)
	}
	for sc.Scan() {
		seen.WriteString(sc.Text() + "\n")
	}
	// 143: the status of a process that SIGTERM ended, as a shell reports
	// it (the documented exit status of train after SIGTERM)
	if err := cmd.Wait(); cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 143 {
		t.Fatalf("exit after SIGTERM to both ranks: %v, want status 143\n%s%s", err, seen.String(), stderr.String())
	}
	if !strings.Contains(seen.String(), "interrupted at iteration") {
		t.Fatalf("rank 0 did not report the interruption:\n%s", seen.String())
	}
	if _, meta, err := readCheckpoint(filepath.Join(dir, ckptName)); err != nil || meta.Iter <= 30 {
		t.Fatalf("checkpoint after SIGTERM: %v %+v", err, meta)
	}
}
