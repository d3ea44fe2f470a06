package main

import (
	"bytes"
	bin "encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
)

// rewriteSparse rewrites the checkpoint in dir with an extra F32 tensor of
// n elements declared after the data and the file extended sparsely to
// its end (8 GiB for n = 2^31 costs a few KB on disk).
func rewriteSparse(t *testing.T, dir, name string, n int64) {
	t.Helper()
	path := filepath.Join(dir, ckptName)
	sd, meta, err := nn.LoadStateDictFile(path)
	if err != nil {
		t.Fatal(err)
	}
	hdr := map[string]any{"__metadata__": meta}
	var data bytes.Buffer
	for _, k := range sd.Names() {
		x := sd[k]
		begin := data.Len()
		dt := "F32"
		if x.DType() == tensor.Int64 {
			dt = "I64"
			for _, v := range x.Ints() {
				bin.Write(&data, bin.LittleEndian, int64(v))
			}
		} else {
			for _, v := range x.Float32s() {
				bin.Write(&data, bin.LittleEndian, math.Float32bits(v))
			}
		}
		hdr[k] = map[string]any{"dtype": dt, "shape": append([]int{}, x.Shape()...), "data_offsets": []int{begin, data.Len()}}
	}
	end := int64(data.Len())
	hdr[name] = map[string]any{"dtype": "F32", "shape": []int64{n}, "data_offsets": []int64{end, end + 4*n}}
	end += 4 * n
	h, err := json.Marshal(hdr)
	if err != nil {
		t.Fatal(err)
	}
	for len(h)%8 != 0 {
		h = append(h, ' ')
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	bin.Write(f, bin.LittleEndian, uint64(len(h)))
	f.Write(h)
	f.Write(data.Bytes())
	if err := f.Truncate(8 + int64(len(h)) + end); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestCheckpointTensorBoundsCLI (issue #31, item 3): checkpoints that used
// to get train sample and --resume killed for memory, an extra 8 GiB model
// tensor and an 8 GiB optimizer tensor (sparse files of a few KB), and
// (item 1) a 1 KB tokenizer standing for 32 GiB, now
// give one line and exit status 1 with little memory used, under
// --max_memory=1GiB as without it; sample, which does not read the
// optimizer's state, samples. --max_memory below what the checkpoint's
// tensors take stops sample and --resume with one line before they read
// anything.
func TestCheckpointTensorBoundsCLI(t *testing.T) {
	tmp := t.TempDir()
	resume := []string{"--resume", "--data=testdata/tiny.txt", "--max_iters=1", "--eval_interval=1", "--eval_iters=1"}
	// issue #31, item 1: a 1 KB BPE tokenizer whose merges double a
	// token's length each (32 GiB of tokens)
	merges := [][2]int{{0, 0}}
	for i := range 33 {
		merges = append(merges, [2]int{256 + i, 256 + i})
	}
	bomb, err := json.Marshal(map[string]any{"kind": "bpe", "merges": merges})
	if err != nil {
		t.Fatal(err)
	}
	withBomb := func(m *ckptMeta) { m.Tokenizer, m.Model.VocabSize = bomb, 290 }
	cases := []struct {
		name   string
		tensor string // added, F32 [2^31]
		edit   func(*ckptMeta)
		args   []string
		code   int
		want   string
	}{
		{"sample, extra model tensor", "transformer.h.0.attn.extra", nil, []string{"sample"}, 1, `is corrupt: tensor "transformer.h.0.attn.extra": unexpected tensor: the model has no parameter of that name (the file's F32 [2147483648], not read)`},
		{"sample --max_memory=1GiB, extra model tensor", "transformer.h.0.attn.extra", nil, []string{"sample", "--max_memory=1GiB"}, 1, `tensor "transformer.h.0.attn.extra": unexpected tensor`},
		{"resume, extra model tensor", "transformer.h.0.attn.extra", nil, resume, 1, `tensor "transformer.h.0.attn.extra": unexpected tensor`},
		{"resume --max_memory=1GiB, extra model tensor", "transformer.h.0.attn.extra", nil, append([]string{"--max_memory=1GiB"}, resume...), 1, `tensor "transformer.h.0.attn.extra": unexpected tensor`},
		{"sample, 8 GiB optimizer tensor", "optimizer.state.9.exp_avg", nil, []string{"sample"}, 0, ""},
		{"sample --max_memory=1GiB, 8 GiB optimizer tensor", "optimizer.state.9.exp_avg", nil, []string{"sample", "--max_memory=1GiB"}, 0, ""},
		{"resume, 8 GiB optimizer tensor", "optimizer.state.9.exp_avg", nil, resume, 1, `is corrupt: tensor "optimizer.state.9.exp_avg": shape mismatch: the optimizer's F32 [2147483648] has 2147483648 elements, more than the model's largest parameter`},
		{"resume --max_memory=1GiB, 8 GiB optimizer tensor", "optimizer.state.9.exp_avg", nil, append([]string{"--max_memory=1GiB"}, resume...), 1, `tensor "optimizer.state.9.exp_avg": shape mismatch`},
		{"sample --max_memory=4KiB", "", nil, []string{"sample", "--max_memory=4KiB"}, 1, "too large for the memory budget: a GPT of vocab_size"},
		{"resume --max_memory=4KiB", "", nil, append([]string{"--max_memory=4KiB"}, resume...), 1, "too large for the memory budget: a GPT of vocab_size"},
		{"sample, tokenizer bomb", "", withBomb, []string{"sample"}, 1, "is corrupt: tokenizer: bpe merge 21 (276, 276) makes a token of 4194304 bytes, more than the 2097152 a token may have"},
		{"resume, tokenizer bomb", "", withBomb, resume, 1, "a token may have"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(tmp, string(rune('a'+i)))
			fakeCheckpoint(t, dir, c.edit)
			if c.tensor != "" {
				rewriteSparse(t, dir, c.tensor, 1<<31)
			}
			stderr, code, wall, rss := runBinary(t, append(c.args, "--out_dir="+dir, "--num_tokens=5")...)
			t.Logf("%v, max RSS %.1f MB: %s", wall.Round(time.Millisecond), float64(rss)/1e6, strings.TrimSpace(stderr))
			if code != c.code {
				t.Errorf("exit status %d, want %d; stderr %q", code, c.code, stderr)
			}
			if c.code != 0 && (strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "train: checkpoint "+filepath.Join(dir, ckptName)) || !strings.Contains(stderr, c.want)) {
				t.Errorf("stderr is not one line naming the checkpoint and %q: %q", c.want, stderr)
			}
			if rss >= 200e6 {
				t.Errorf("max RSS %d bytes, want < 200 MB", rss)
			}
		})
	}
}

// TestResumeOptimizerBudget: a checkpoint whose model fits --max_memory
// but not with its optimizer's state (AdamW's two moments per parameter)
// is refused by --resume with one line before any tensor is read, naming
// the largest (nn's TestCheckpointBounded checks that LoadCheckpoint,
// which sample uses, reads the model under such a limit).
func TestResumeOptimizerBudget(t *testing.T) {
	dir := t.TempDir()
	fakeCheckpoint(t, dir, nil)
	path := filepath.Join(dir, ckptName)
	sd, meta, err := nn.LoadStateDictFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var modelBytes int64
	for i, name := range sd.Names() {
		x := sd[name]
		modelBytes += 4 * int64(x.Numel())
		for _, f := range []string{"exp_avg", "exp_avg_sq"} {
			sd[fmt.Sprintf("%sstate.%d.%s", nn.OptimizerPrefix, i, f)] = tensor.ZerosLike(x)
		}
	}
	if err := nn.SaveStateDictFile(path, sd, meta); err != nil {
		t.Fatal(err)
	}
	limit := fmt.Sprintf("--max_memory=%dKiB", modelBytes*3/2>>10)
	stderr, code, _, _ := runBinary(t, "--resume", "--data=testdata/tiny.txt", "--max_iters=1", limit, "--out_dir="+dir)
	if want := "train: checkpoint " + path + ": tensor "; code != 1 || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, want) || !strings.Contains(stderr, "too large for the memory budget: the ") {
		t.Errorf("resume under %s: exit %d, stderr %q", limit, code, stderr)
	}
	t.Logf("%s", stderr)
}
