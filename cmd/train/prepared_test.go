package main

import (
	le "encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wickml/wick/internal/data"
	"github.com/wickml/wick/tokenizer"
)

// The fixtures under testdata/nanogpt/data are nanoGPT's prepare.py run on
// the first 6000 characters of tiny Shakespeare (scripts/gen_nanogpt_data.sh):
// shakespeare_char with meta.pkl, shakespeare with GPT-2's ids (tiktoken's).
const (
	charDataset = "testdata/nanogpt/data/shakespeare_char"
	gpt2Dataset = "testdata/nanogpt/data/shakespeare"
)

func readBin(t *testing.T, path string) []int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int, len(b)/2)
	for i := range ids {
		ids[i] = int(le.LittleEndian.Uint16(b[2*i:]))
	}
	return ids
}

// TestPreparedFixtures checks the fixtures against Wick's own tokenizers:
// meta.pkl's vocabulary is the char tokenizer of the text, the .bin files
// hold the ids of its first 90% of characters and of the rest, by that
// vocabulary and by GPT-2's (Wick's encoding of GPT-2 agreeing with
// tiktoken's, which wrote them).
func TestPreparedFixtures(t *testing.T) {
	text, err := os.ReadFile(filepath.Join(charDataset, "input.txt"))
	if err != nil {
		t.Fatal(err)
	}
	cut := len(text) * 9 / 10 // ASCII: characters are bytes
	v, err := data.ReadMetaPkl(filepath.Join(charDataset, "meta.pkl"))
	if err != nil {
		t.Fatal(err)
	}
	char := tokenizer.NewChar(text)
	all := make([]int, char.VocabSize())
	for i := range all {
		all[i] = i
	}
	if strings.Join(v.Itos, "") != char.Decode(all) {
		t.Errorf("meta.pkl's itos %q is not the char tokenizer's vocabulary", v.Itos)
	}
	for _, c := range []struct {
		dataset string
		tok     func(string) []int
	}{
		{charDataset, char.Encode},
		{gpt2Dataset, tokenizer.NewGPT2().EncodeOrdinary},
	} {
		if got, want := readBin(t, filepath.Join(c.dataset, "train.bin")), c.tok(string(text[:cut])); !slices.Equal(got, want) {
			t.Errorf("%s/train.bin: %d ids, Wick encodes %d (first %v, want %v)", c.dataset, len(got), len(want), got[:8], want[:8])
		}
		if got, want := readBin(t, filepath.Join(c.dataset, "val.bin")), c.tok(string(text[cut:])); !slices.Equal(got, want) {
			t.Errorf("%s/val.bin: %d ids, Wick encodes %d", c.dataset, len(got), len(want))
		}
	}
}

// TestPreparedTrainResumeSample trains on both layouts of nanoGPT's
// prepared data, resumes, and samples; the resumed char run takes the
// steps of an uninterrupted one.
func TestPreparedTrainResumeSample(t *testing.T) {
	for _, c := range []struct {
		dataset, desc string
	}{
		{charDataset, "char tokenizer with 55 tokens"},
		{gpt2Dataset, "gpt2 tokenizer with 50257 tokens"},
	} {
		t.Run(filepath.Base(c.dataset), func(t *testing.T) {
			dir := t.TempDir()
			args := func(extra ...string) []string {
				return tinyArgs(dir, append([]string{"--dataset=" + c.dataset, "--eval_interval=3", "--num_tokens=10"}, extra...)...)
			}
			out := mustRun(t, args("--max_iters=3", "--always_save_checkpoint")...)
			for _, want := range []string{c.dataset + " (nanoGPT's train.bin and val.bin)", c.desc} {
				if !strings.Contains(out, want) {
					t.Errorf("the run's output lacks %q:\n%s", want, out)
				}
			}
			out = mustRun(t, "--resume", "--out_dir="+dir, "--max_iters=6")
			if !strings.Contains(out, "resuming at iteration 3") || !strings.Contains(out, c.desc) {
				t.Errorf("resumed run:\n%s", out)
			}
			sample := mustRun(t, "sample", "--out_dir="+dir, "--prompt=ROMEO:", "--num_tokens=12", "--seed=3")
			if !strings.HasPrefix(sample, "ROMEO:") || len(sample) <= len("ROMEO:\n") {
				t.Errorf("train sample printed %q", sample)
			}
			if !strings.HasPrefix(c.dataset, charDataset) {
				return
			}
			full := t.TempDir()
			mustRun(t, tinyArgs(full, "--dataset="+c.dataset, "--eval_interval=3", "--num_tokens=10", "--max_iters=6")...)
			la, lb := trainLosses(readLog(t, full)), trainLosses(readLog(t, dir))
			if len(la) != 6 || len(lb) != 6 {
				t.Fatalf("%d and %d logged steps, want 6", len(la), len(lb))
			}
			for it := range 6 {
				if la[it] != lb[it] {
					t.Errorf("iteration %d: loss %v uninterrupted, %v resumed", it, la[it], lb[it])
				}
			}
		})
	}
}

// TestDatasetName: --dataset=NAME reads data/NAME as nanoGPT's train.py
// does, its train.bin and val.bin before its input.txt; the repository's
// data/shakespeare_char (input.txt only, on a fresh clone) trains as text.
func TestDatasetName(t *testing.T) {
	out := t.TempDir()
	t.Chdir("testdata/nanogpt")
	o := mustRun(t, "--dataset=shakespeare_char", "--out_dir="+out, "--n_layer=1", "--n_head=2", "--n_embd=16", "--block_size=16", "--batch_size=4",
		"--max_iters=2", "--eval_interval=2", "--eval_iters=1", "--num_samples=0")
	if want := filepath.Join("data", "shakespeare_char") + " (nanoGPT's train.bin and val.bin)"; !strings.Contains(o, want) {
		t.Errorf("--dataset=shakespeare_char in testdata/nanogpt: output lacks %q:\n%s", want, o)
	}
	t.Chdir("../../../..")
	o = mustRun(t, "--dataset=shakespeare_char", "--out_dir="+t.TempDir(), "--n_layer=1", "--n_head=2", "--n_embd=16", "--block_size=16", "--batch_size=4",
		"--max_iters=2", "--eval_interval=2", "--eval_iters=1", "--num_samples=0")
	// nanoGPT's split of tiny Shakespeare, from its input.txt on a fresh
	// clone, or from the train.bin and val.bin its prepare.py writes there
	want := "data: " + filepath.Join("data", "shakespeare_char", "input.txt") + ": 1003854 train and 111540 val tokens, char tokenizer with 65 tokens"
	if data.HasPrepared(filepath.Join("data", "shakespeare_char")) {
		want = "data: " + filepath.Join("data", "shakespeare_char") + " (nanoGPT's train.bin and val.bin): 1003854 train and 111540 val tokens, char tokenizer with 65 tokens"
	}
	if !strings.Contains(o, want) {
		t.Errorf("--dataset=shakespeare_char in the repository: output lacks %q:\n%s", want, o)
	}
}

// TestPreparedErrors: broken prepared datasets, tokenizers that do not fit
// them and nanoGPT's ckpt.pt get one line naming the problem.
func TestPreparedErrors(t *testing.T) {
	tmp := t.TempDir()
	mk := func(name string, files map[string][]byte) string {
		d := filepath.Join(tmp, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for n, b := range files {
			writeFile(t, filepath.Join(d, n), b)
		}
		return d
	}
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	trainBin, valBin, meta := read(filepath.Join(charDataset, "train.bin")), read(filepath.Join(charDataset, "val.bin")), read(filepath.Join(charDataset, "meta.pkl"))
	onlyTrain := mk("only-train", map[string][]byte{"train.bin": trainBin})
	odd := mk("odd", map[string][]byte{"train.bin": trainBin[:101], "val.bin": valBin})
	badMeta := mk("bad-meta", map[string][]byte{"train.bin": trainBin, "val.bin": valBin, "meta.pkl": meta[:len(meta)/2]})
	smallVocab := mk("small-vocab", map[string][]byte{"train.bin": trainBin, "val.bin": valBin, "meta.pkl": meta})
	writeFile(t, filepath.Join(smallVocab, "val.bin"), append(slices.Clone(valBin), 200, 0)) // id 200 of 55
	empty := mk("empty", nil)
	ptOnly := mk("nanogpt-out", map[string][]byte{"ckpt.pt": []byte("PK\x03\x04 a zip of pickles")})
	out := filepath.Join(tmp, "out")
	base := func(dataset string, extra ...string) []string {
		return tinyArgs(out, append([]string{"--dataset=" + dataset}, extra...)...)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"val.bin missing", base(onlyTrain), "val.bin does not exist"},
		{"odd size", base(odd), "an odd number"},
		{"truncated meta.pkl", base(badMeta), "meta.pkl: not a pickle of nanoGPT's vocabulary"},
		{"id outside meta.pkl's vocabulary", base(smallVocab), "holds id 200, outside the char tokenizer's 55 tokens"},
		{"neither bin nor text", base(empty), "has neither nanoGPT's train.bin and val.bin nor an input.txt"},
		{"bpe on a char dataset", base(charDataset, "--tokenizer=bpe"), "--tokenizer=bpe does not fit"},
		{"char on GPT-2 ids", base(gpt2Dataset, "--tokenizer=char"), "GPT-2's token ids"},
		{"block larger than val.bin", base(gpt2Dataset, "--block_size=200"), "val.bin holds 174 tokens"},
		{"resume nanoGPT's ckpt.pt", []string{"--resume", "--out_dir=" + ptOnly}, "ckpt.pt is nanoGPT's PyTorch checkpoint, which train does not read"},
		{"sample nanoGPT's ckpt.pt", []string{"sample", "--out_dir=" + ptOnly}, "ckpt.pt is nanoGPT's PyTorch checkpoint, which train does not read"},
	} {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, c.args...)
			if code != 1 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, c.want) {
				t.Errorf("exit %d, stderr %q: want 1 and one line with %q (stdout %s)", code, stderr, c.want, stdout)
			}
		})
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a failed run created out_dir")
	}
	// training afresh into nanoGPT's out_dir says what ckpt.pt is
	_, stderr, code := runCLI(t, tinyArgs(ptOnly, "--max_iters=1", "--eval_interval=1", "--num_samples=0")...)
	if code != 0 || !strings.Contains(stderr, "ckpt.pt is nanoGPT's checkpoint, which train does not read; this run writes its own ckpt.safetensors beside it") {
		t.Errorf("training into an out_dir with ckpt.pt: exit %d, stderr %q", code, stderr)
	}
}
