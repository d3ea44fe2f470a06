package nn_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wickml/wick/autograd"
	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"

	"github.com/wickml/wick/internal/approx"
)

// The model directories and references under testdata/pretrained come from
// scripts/gen_golden_pretrained.py (PyTorch 1.13, the hub's layout written
// by hand).

var pretrainedDir = filepath.Join("..", "testdata", "pretrained")

// pretrainedVariants maps each model directory to the tag of its
// references in golden.safetensors.
var pretrainedVariants = []struct{ dir, tag string }{
	{"prefixed", "f32"}, {"plain", "f32"}, {"sharded", "f32"}, {"f16", "f16"}, {"bf16", "bf16"},
}

func pretrainedGolden(t *testing.T) nn.StateDict {
	t.Helper()
	sd, _, err := nn.LoadStateDictFile(filepath.Join(pretrainedDir, "golden.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	return sd
}

func TestLoadPretrainedGoldens(t *testing.T) {
	golden := pretrainedGolden(t)
	want := nn.GPTConfig{VocabSize: 97, BlockSize: 32, NLayer: 2, NHead: 4, NEmbd: 32, Bias: true, Activation: nn.ActGELUTanh}
	for _, v := range pretrainedVariants {
		t.Run(v.dir, func(t *testing.T) {
			m, err := nn.LoadPretrained(filepath.Join(pretrainedDir, v.dir))
			if err != nil {
				t.Fatal(err)
			}
			if m.Config != want {
				t.Errorf("config %+v, want %+v", m.Config, want)
			}
			m.Eval()
			var logits *tensor.Tensor
			autograd.NoGrad(func() { logits = m.Forward(get(t, golden, "idx")) })
			approx.EqualTensor(t, "logits", logits, get(t, golden, "logits."+v.tag), approx.ReduceRTol, approx.ReduceATol)
			out := m.GenerateWith(get(t, golden, "gen.prompt"), 40, 1, 1, tensor.NewGenerator(1))
			if got, want := out.Ints(), get(t, golden, "gen."+v.tag).Ints(); !slices.Equal(got, want) {
				t.Errorf("greedy continuation\n got %v\nwant %v", got, want)
			}
		})
	}
}

// TestLoadPretrainedActivationMatters checks that the goldens tell GPT-2's
// tanh GELU from the exact one: with exact GELU the logits miss.
func TestLoadPretrainedActivationMatters(t *testing.T) {
	golden := pretrainedGolden(t)
	m, err := nn.LoadPretrained(filepath.Join(pretrainedDir, "plain"))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range m.H {
		b.MLP.Gelu = nn.GELU{}
	}
	var logits *tensor.Tensor
	autograd.NoGrad(func() { logits = m.Forward(get(t, golden, "idx")) })
	want := get(t, golden, "logits.f32")
	scale := want.Abs().Max().Item()
	bad := logits.Sub(want).Abs().Gt(want.Abs().MulScalar(1e-4).AddScalar(1e-5 * scale)).Sum().Item()
	if bad == 0 {
		t.Error("with exact GELU the logits still match the tanh-GELU references to 1e-4")
	}
}

// TestLoadPretrainedStructure checks that a loaded model is built like
// NewGPT's: the same parameters (names, shapes, order), modules and
// printout, and that it starts in training mode with gradients on.
func TestLoadPretrainedStructure(t *testing.T) {
	m, err := nn.LoadPretrained(filepath.Join(pretrainedDir, "prefixed"))
	if err != nil {
		t.Fatal(err)
	}
	ref := nn.NewGPT(m.Config)
	got, want := m.NamedParameters(), ref.NamedParameters()
	if len(got) != len(want) {
		t.Fatalf("%d parameters, NewGPT has %d", len(got), len(want))
	}
	for i := range got {
		if got[i].Name != want[i].Name || !slices.Equal(got[i].Param.Shape(), want[i].Param.Shape()) {
			t.Errorf("parameter %d: %s %v, NewGPT's %s %v", i, got[i].Name, got[i].Param.Shape(), want[i].Name, want[i].Param.Shape())
		}
		if !got[i].Param.IsRequiringGrad() {
			t.Errorf("%s does not require grad", got[i].Name)
		}
	}
	if m.String() != ref.String() {
		t.Errorf("String() differs from NewGPT's:\n%s\nwant\n%s", m, ref)
	}
	// every field that NewGPT sets, down the module tree, is set (so a
	// field added to a layer's constructor is not missed by the loader's)
	var unset []string
	var walk func(path string, got, want reflect.Value)
	walk = func(path string, got, want reflect.Value) {
		if want.IsZero() {
			return
		}
		if got.IsZero() {
			unset = append(unset, path)
			return
		}
		switch want.Kind() {
		case reflect.Pointer:
			if want.Type() != reflect.TypeOf((*tensor.Tensor)(nil)) {
				walk(path, got.Elem(), want.Elem())
			}
		case reflect.Struct:
			for i := range want.NumField() {
				walk(path+"."+want.Type().Field(i).Name, got.Field(i), want.Field(i))
			}
		case reflect.Slice:
			for i := range min(got.Len(), want.Len()) {
				walk(fmt.Sprintf("%s[%d]", path, i), got.Index(i), want.Index(i))
			}
		}
	}
	walk("GPT", reflect.ValueOf(m), reflect.ValueOf(ref))
	if len(unset) > 0 {
		t.Errorf("fields that NewGPT sets are zero in the loaded model: %v", unset)
	}
	if m.LmHead.Weight != m.Wte.Weight {
		t.Error("lm_head.weight is not tied to wte.weight")
	}
	if !m.Drop.Training || !m.H[0].MLP.Drop.Training {
		t.Error("a loaded model should start in training mode, like NewGPT's")
	}
	// fine-tuning works: a loss and gradients
	idx := tensor.FromInts([]int{1, 2, 3, 4}, 1, 4)
	m.Loss(idx, idx).Backward()
	if m.Wte.Weight.Grad() == nil || m.H[1].MLP.CFc.Weight.Grad() == nil {
		t.Error("no gradients after Backward")
	}
}

// copyDir copies the files of src into a new directory and returns it.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// editConfig rewrites dir/config.json with edit applied to its fields.
func editConfig(t *testing.T, dir string, edit func(map[string]any)) {
	t.Helper()
	path := filepath.Join(dir, "config.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	edit(c)
	b, _ = json.Marshal(c)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// tensorSpan returns where a tensor's data lies in a safetensors file.
func tensorSpan(t *testing.T, file []byte, name string) (begin, end int) {
	t.Helper()
	n := int(binary.LittleEndian.Uint64(file))
	var hdr map[string]json.RawMessage
	if err := json.Unmarshal(file[8:8+n], &hdr); err != nil {
		t.Fatal(err)
	}
	var e struct {
		DataOffsets []int `json:"data_offsets"`
	}
	if err := json.Unmarshal(hdr[name], &e); err != nil || len(e.DataOffsets) != 2 {
		t.Fatalf("tensor %q not in the file: %v", name, err)
	}
	return 8 + n + e.DataOffsets[0], 8 + n + e.DataOffsets[1]
}

func editFile(t *testing.T, path string, edit func([]byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, edit(b), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadPretrainedErrors(t *testing.T) {
	model := func(dir string) string { return filepath.Join(dir, "model.safetensors") }
	cases := []struct {
		name    string
		variant string
		edit    func(t *testing.T, dir string)
		is      error
		want    []string // substrings; "DIR" stands for the directory
	}{
		{"no config", "plain", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "config.json")) },
			fs.ErrNotExist, []string{"DIR/config.json"}},
		{"no weights", "plain", func(t *testing.T, dir string) { os.Remove(model(dir)) },
			fs.ErrNotExist, []string{"model.safetensors", "model.safetensors.index.json", "pytorch_model.bin"}},
		{"missing shard", "sharded", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "model-00002-of-00002.safetensors")) },
			fs.ErrNotExist, []string{"DIR/model-00002-of-00002.safetensors", "model.safetensors.index.json", `tensor "transformer.h.1.`}},
		{"shard without a tensor of the index", "sharded", func(t *testing.T, dir string) {
			editFile(t, filepath.Join(dir, "model.safetensors.index.json"), func(b []byte) []byte {
				return bytes.Replace(b, []byte(`"transformer.ln_f.bias": "model-00002`), []byte(`"transformer.ln_f.bias": "model-00001`), 1)
			})
			editFile(t, filepath.Join(dir, "model-00002-of-00002.safetensors"), func(b []byte) []byte {
				return bytes.Replace(b, []byte(`"transformer.ln_f.bias"`), []byte(`"transformer.ln_f.bia_"`), 1)
			})
		}, nn.ErrMissingTensor, []string{`tensor "ln_f.bias"`, "model-00001-of-00002.safetensors, where model.safetensors.index.json puts it"}},
		{"config wider than the weights", "plain", func(t *testing.T, dir string) { editConfig(t, dir, func(c map[string]any) { c["n_embd"] = 64 }) },
			nn.ErrShapeMismatch, []string{"DIR/model.safetensors", `tensor "wte.weight"`, "file has [97 32]", "needs [97 64]", "n_embd 64"}},
		{"conv1d layout", "plain", func(t *testing.T, dir string) { editConfig(t, dir, func(c map[string]any) { c["vocab_size"] = 50 }) },
			nn.ErrShapeMismatch, []string{`tensor "wte.weight"`, "needs [50 32]"}},
		{"more layers than the weights", "prefixed", func(t *testing.T, dir string) { editConfig(t, dir, func(c map[string]any) { c["n_layer"] = 3 }) },
			nn.ErrMissingTensor, []string{`tensor "h.2.ln_1.weight"`, "model.safetensors does not hold it", "n_layer 3"}},
		{"fewer layers than the weights", "prefixed", func(t *testing.T, dir string) { editConfig(t, dir, func(c map[string]any) { c["n_layer"] = 1 }) },
			nn.ErrUnexpectedTensor, []string{"DIR/model.safetensors", `tensor "transformer.h.1.attn.c_attn.bias"`}},
		{"truncated data", "plain", func(t *testing.T, dir string) {
			editFile(t, model(dir), func(b []byte) []byte { return b[:len(b)/2] })
		}, nn.ErrTruncated, []string{"DIR/model.safetensors", `tensor "`, "which has"}},
		{"truncated header", "f16", func(t *testing.T, dir string) {
			editFile(t, model(dir), func(b []byte) []byte { return b[:100] })
		}, nn.ErrTruncated, []string{"DIR/model.safetensors", "header"}},
		{"wrong dtype", "plain", func(t *testing.T, dir string) {
			editFile(t, model(dir), func(b []byte) []byte {
				return bytes.Replace(b, []byte(`"h.0.mlp.c_fc.bias":{"dtype":"F32"`), []byte(`"h.0.mlp.c_fc.bias":{"dtype":"I32"`), 1)
			})
		}, nn.ErrDTypeMismatch, []string{"DIR/model.safetensors", `tensor "h.0.mlp.c_fc.bias"`, "I32"}},
		{"untied lm_head", "prefixed", func(t *testing.T, dir string) {
			editFile(t, model(dir), func(b []byte) []byte {
				begin, _ := tensorSpan(t, b, "lm_head.weight")
				b[begin+41] ^= 0x40
				return b
			})
		}, nn.ErrUnexpectedTensor, []string{"DIR/model.safetensors", `tensor "lm_head.weight"`, "element 10", "ties"}},
		{"activation", "plain", func(t *testing.T, dir string) {
			editConfig(t, dir, func(c map[string]any) { c["activation_function"] = "relu" })
		}, nn.ErrBadConfig, []string{"DIR/config.json", `activation_function "relu"`}},
		{"layer norm epsilon", "plain", func(t *testing.T, dir string) {
			editConfig(t, dir, func(c map[string]any) { c["layer_norm_epsilon"] = 1e-6 })
		}, nn.ErrBadConfig, []string{"DIR/config.json", "layer_norm_epsilon 1e-06"}},
		{"size missing", "plain", func(t *testing.T, dir string) {
			editConfig(t, dir, func(c map[string]any) { delete(c, "n_head") })
		}, nn.ErrBadConfig, []string{"DIR/config.json", "n_head is missing"}},
		{"not JSON", "plain", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "config.json"), []byte("{n_embd: 32"), 0o644)
		}, nn.ErrBadConfig, []string{"DIR/config.json"}},
		{"shard outside the directory", "sharded", func(t *testing.T, dir string) {
			editFile(t, filepath.Join(dir, "model.safetensors.index.json"), func(b []byte) []byte {
				return bytes.Replace(b, []byte(`"model-00002-of-00002.safetensors"`), []byte(`"../model-00002-of-00002.safetensors"`), 1)
			})
		}, nn.ErrCorruptHeader, []string{"DIR/model.safetensors.index.json", "../model-00002-of-00002.safetensors"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := copyDir(t, filepath.Join(pretrainedDir, c.variant))
			c.edit(t, dir)
			m, err := nn.LoadPretrained(dir)
			if err == nil {
				t.Fatal("no error")
			}
			if m != nil {
				t.Error("a model came back with the error")
			}
			msg := err.Error()
			t.Log(msg)
			if !errors.Is(err, c.is) {
				t.Errorf("error does not wrap %v: %s", c.is, msg)
			}
			// One line, or several problems: the first on the error's
			// line, then one per indented line, each once.
			lines := strings.Split(msg, "\n")
			seen := map[string]bool{}
			for i, l := range lines {
				if i > 0 && !strings.HasPrefix(l, "\t") || seen[l] || strings.Contains(l, " problems:") {
					t.Errorf("line %d %q: want the first problem, then one per indented line, each once", i, l)
				}
				seen[l] = true
			}
			if !strings.HasPrefix(msg, "nn: ") {
				t.Errorf("want an error starting with \"nn: \", got %q", msg)
			}
			for _, w := range c.want {
				if w = strings.ReplaceAll(w, "DIR", dir); !strings.Contains(msg, w) {
					t.Errorf("error does not contain %q: %s", w, msg)
				}
			}
		})
	}
}

// hubCache builds a Hugging Face cache under root holding the test model
// as repository repo: its files as blobs, snapshot directories of symbolic
// links to them (old first, then current, which is newer), and refs/main
// naming ref when ref is not empty.
func hubCache(t *testing.T, root, repo, ref string, snapshots ...string) {
	t.Helper()
	base := filepath.Join(root, "models--"+strings.ReplaceAll(repo, "/", "--"))
	src := filepath.Join(pretrainedDir, "plain")
	for i, snap := range snapshots {
		d := filepath.Join(base, "snapshots", snap)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"config.json", "model.safetensors"} {
			b, err := os.ReadFile(filepath.Join(src, f))
			if err != nil {
				t.Fatal(err)
			}
			blob := filepath.Join(base, "blobs", snap+"-"+f)
			os.MkdirAll(filepath.Dir(blob), 0o755)
			if err := os.WriteFile(blob, b, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join("..", "..", "blobs", snap+"-"+f), filepath.Join(d, f)); err != nil {
				t.Fatal(err)
			}
		}
		mod := time.Date(2024, 1, 1+i, 0, 0, 0, 0, time.UTC)
		if err := os.Chtimes(d, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	if ref != "" {
		os.MkdirAll(filepath.Join(base, "refs"), 0o755)
		if err := os.WriteFile(filepath.Join(base, "refs", "main"), []byte(ref), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestPretrainedDirHubCache(t *testing.T) {
	t.Run("HF_HUB_CACHE and refs/main", func(t *testing.T) {
		cache := t.TempDir()
		// refs/main names the older snapshot: it wins over the newest
		hubCache(t, cache, "gpt2", "607a30d783dfa663caf39e06633721c8d4cfcd7e", "607a30d783dfa663caf39e06633721c8d4cfcd7e", "11c5a3d5811f50298f278a704980280950aedb10")
		t.Setenv("HF_HUB_CACHE", cache)
		t.Setenv("HF_HOME", filepath.Join(cache, "elsewhere"))
		dir, err := nn.PretrainedDir("gpt2")
		want := filepath.Join(cache, "models--gpt2", "snapshots", "607a30d783dfa663caf39e06633721c8d4cfcd7e")
		if err != nil || dir != want {
			t.Fatalf("PretrainedDir(gpt2) = %q, %v; want %q", dir, err, want)
		}
		m, err := nn.LoadPretrained("gpt2")
		if err != nil {
			t.Fatal(err)
		}
		golden := pretrainedGolden(t)
		var logits *tensor.Tensor
		autograd.NoGrad(func() { logits = m.Forward(get(t, golden, "idx")) })
		approx.EqualTensor(t, "logits", logits, get(t, golden, "logits.f32"), approx.ReduceRTol, approx.ReduceATol)
	})
	t.Run("HF_HOME, newest snapshot without a ref", func(t *testing.T) {
		home := t.TempDir()
		hubCache(t, filepath.Join(home, "hub"), "gpt2-medium", "", "aaaa", "bbbb", "0000")
		t.Setenv("HF_HUB_CACHE", "")
		t.Setenv("HF_HOME", home)
		dir, err := nn.PretrainedDir("gpt2-medium")
		if want := filepath.Join(home, "hub", "models--gpt2-medium", "snapshots", "0000"); err != nil || dir != want {
			t.Errorf("PretrainedDir(gpt2-medium) = %q, %v; want %q (the newest)", dir, err, want)
		}
	})
	t.Run("openai-community repository", func(t *testing.T) {
		cache := t.TempDir()
		hubCache(t, cache, "openai-community/gpt2-xl", "cafe", "cafe")
		t.Setenv("HF_HUB_CACHE", cache)
		for _, name := range []string{"gpt2-xl", "openai-community/gpt2-xl"} {
			dir, err := nn.PretrainedDir(name)
			if want := filepath.Join(cache, "models--openai-community--gpt2-xl", "snapshots", "cafe"); err != nil || dir != want {
				t.Errorf("PretrainedDir(%s) = %q, %v; want %q", name, dir, err, want)
			}
		}
	})
	t.Run("default under the home directory", func(t *testing.T) {
		home := t.TempDir()
		hubCache(t, filepath.Join(home, ".cache", "huggingface", "hub"), "gpt2-large", "c0ffee", "c0ffee")
		t.Setenv("HF_HUB_CACHE", "")
		t.Setenv("HF_HOME", "")
		t.Setenv("XDG_CACHE_HOME", "")
		t.Setenv("HOME", home)
		dir, err := nn.PretrainedDir("gpt2-large")
		if want := filepath.Join(home, ".cache", "huggingface", "hub", "models--gpt2-large", "snapshots", "c0ffee"); err != nil || dir != want {
			t.Errorf("PretrainedDir(gpt2-large) = %q, %v; want %q", dir, err, want)
		}
	})
	t.Run("a directory wins", func(t *testing.T) {
		dir := filepath.Join(pretrainedDir, "plain")
		if got, err := nn.PretrainedDir(dir); err != nil || got != dir {
			t.Errorf("PretrainedDir(%q) = %q, %v", dir, got, err)
		}
	})
	t.Run("bad refs/main", func(t *testing.T) {
		// refs/main must name an existing snapshot directly under
		// snapshots/: anything else is an error naming it, never
		// another snapshot (here "good", the only and newest one)
		long := strings.Repeat("a", 2000)
		for _, ref := range []string{"..", ".", "../..", "good/../good", "x/y", "missing", " ", long, "bad\\name"} {
			cache := t.TempDir()
			hubCache(t, cache, "gpt2", "", "good")
			refs := filepath.Join(cache, "models--gpt2", "refs")
			os.MkdirAll(refs, 0o755)
			if err := os.WriteFile(filepath.Join(refs, "main"), []byte(ref), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Setenv("HF_HUB_CACHE", cache)
			dir, err := nn.PretrainedDir("gpt2")
			if err == nil || !strings.Contains(err.Error(), filepath.Join(refs, "main")) {
				t.Errorf("refs/main %.20q: PretrainedDir = %q, %v; want an error naming refs/main", ref, dir, err)
			}
		}
		// a FIFO or a directory as refs/main: an error at once, no blocking read
		cache := t.TempDir()
		hubCache(t, cache, "gpt2", "", "good")
		refs := filepath.Join(cache, "models--gpt2", "refs")
		os.MkdirAll(filepath.Join(refs, "main"), 0o755)
		t.Setenv("HF_HUB_CACHE", cache)
		if dir, err := nn.PretrainedDir("gpt2"); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("refs/main a directory: PretrainedDir = %q, %v; want an error", dir, err)
		}
	})
	t.Run("errors", func(t *testing.T) {
		cache := t.TempDir()
		t.Setenv("HF_HUB_CACHE", cache)
		for _, c := range []struct{ name, want string }{
			{"gpt2", filepath.Join(cache, "models--gpt2", "snapshots")},
			{"gpt3", "not one of the hub names"},
		} {
			_, err := nn.LoadPretrained(c.name)
			if err == nil || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("LoadPretrained(%s): %v; want a not-exist error containing %q", c.name, err, c.want)
			}
		}
		file := filepath.Join(pretrainedDir, "plain", "model.safetensors")
		if _, err := nn.LoadPretrained(file); err == nil || !strings.Contains(err.Error(), file+": not a directory") {
			t.Errorf("LoadPretrained(%s): %v; want an error saying it is not a directory", file, err)
		}
	})
}

func TestReadPretrainedConfig(t *testing.T) {
	cfg, err := nn.ReadPretrainedConfig(filepath.Join(pretrainedDir, "sharded"))
	want := nn.GPTConfig{VocabSize: 97, BlockSize: 32, NLayer: 2, NHead: 4, NEmbd: 32, Bias: true, Activation: nn.ActGELUTanh}
	if err != nil || cfg != want {
		t.Errorf("ReadPretrainedConfig = %+v, %v; want %+v", cfg, err, want)
	}
	dir := copyDir(t, filepath.Join(pretrainedDir, "plain"))
	editConfig(t, dir, func(c map[string]any) { c["activation_function"] = "gelu"; c["n_inner"] = nil })
	if cfg, err := nn.ReadPretrainedConfig(dir); err != nil || cfg.Activation != nn.ActGELU {
		t.Errorf("activation_function gelu: %+v, %v; want exact GELU", cfg, err)
	}
	editConfig(t, dir, func(c map[string]any) { delete(c, "activation_function") })
	if cfg, err := nn.ReadPretrainedConfig(dir); err != nil || cfg.Activation != nn.ActGELUTanh {
		t.Errorf("no activation_function: %+v, %v; want gelu_new, Hugging Face's default", cfg, err)
	}
}

// TestConcurrentLoadPretrained loads the test models on several goroutines
// at once and runs each, and one shared model, on all of them: each gets
// PyTorch's logits.
func TestConcurrentLoadPretrained(t *testing.T) {
	golden := pretrainedGolden(t)
	idx := get(t, golden, "idx")
	shared, err := nn.LoadPretrained(filepath.Join(pretrainedDir, "plain"))
	if err != nil {
		t.Fatal(err)
	}
	shared.Eval()
	own := make([]*tensor.Tensor, len(pretrainedVariants))        // each goroutine's model's logits
	fromShared := make([]*tensor.Tensor, len(pretrainedVariants)) // the shared model's
	errs := make([]error, len(pretrainedVariants))
	var wg sync.WaitGroup
	for i, v := range pretrainedVariants {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, err := nn.LoadPretrained(filepath.Join(pretrainedDir, v.dir))
			if err != nil {
				errs[i] = err
				return
			}
			m.Eval()
			autograd.NoGrad(func() {
				own[i] = m.Forward(idx)
				fromShared[i] = shared.Forward(idx)
			})
		}()
	}
	wg.Wait()
	for i, v := range pretrainedVariants {
		if errs[i] != nil {
			t.Errorf("goroutine %d: %v", i, errs[i])
			continue
		}
		approx.EqualTensor(t, fmt.Sprintf("goroutine %d: %s logits", i, v.dir), own[i], get(t, golden, "logits."+v.tag), approx.ReduceRTol, approx.ReduceATol)
		approx.EqualTensor(t, fmt.Sprintf("goroutine %d: shared model's logits", i), fromShared[i], get(t, golden, "logits.f32"), approx.ReduceRTol, approx.ReduceATol)
	}
}
