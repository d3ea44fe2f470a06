package nn_test

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
)

// TestLoadCausalLMTooLarge: a config.json whose model would not fit the
// allocation limit (num_hidden_layers 1e9 with the weights of two layers,
// a vocabulary of 2^31) is an error wrapping nn.ErrTooLarge, returned
// before anything is built or read: the load allocates almost nothing.
func TestLoadCausalLMTooLarge(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(map[string]any)
		want string
	}{
		{"layers", func(c map[string]any) { c["num_hidden_layers"] = 1_000_000_000 }, "num_hidden_layers 1000000000"},
		{"vocab", func(c map[string]any) { c["vocab_size"] = 1 << 31 }, "vocab_size 2147483648"},
		{"width", func(c map[string]any) { c["hidden_size"] = 1 << 20; c["head_dim"] = 1 << 18 }, "hidden_size 1048576"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := badLlamaDir(t, c.edit, nil)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := nn.LoadCausalLM(dir)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, nn.ErrTooLarge) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "config.json") {
				t.Fatalf("err = %v; want ErrTooLarge naming config.json and %q", err, c.want)
			}
			if got := after.TotalAlloc - before.TotalAlloc; got > 16<<20 {
				t.Errorf("the refused load allocated %d bytes", got)
			}
		})
	}
}

// TestNewLlamaTooLarge: NewLlama panics with a *tensor.Error naming the
// sizes instead of running out of memory.
func TestNewLlamaTooLarge(t *testing.T) {
	cfg := nn.LlamaConfig{ModelType: "llama", VocabSize: 32000, HiddenSize: 4096, IntermediateSize: 11008, NumHiddenLayers: 1_000_000_000,
		NumAttentionHeads: 32, NumKeyValueHeads: 32, HeadDim: 128, MaxPositionEmbeddings: 4096, RMSNormEps: 1e-5, RopeTheta: 10000}
	err := tensor.Catch(func() { nn.NewLlama(cfg) })
	var te *tensor.Error
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "NewLlama") || !strings.Contains(err.Error(), "num_hidden_layers 1000000000") {
		t.Fatalf("NewLlama: %v; want a *tensor.Error naming NewLlama and the layers", err)
	}
}

// TestLlamaNumParams: NumParams counts what the model holds, tied or not,
// with biases and q/k norms.
func TestLlamaNumParams(t *testing.T) {
	for _, name := range []string{"llama_gqa", "qwen2", "qwen3"} {
		cfg, err := nn.ReadLlamaConfig(llamaDir(name))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := cfg.NumParams(), int64(nn.NumParams(nn.NewLlama(cfg))); got != want {
			t.Errorf("%s: NumParams %d, the model has %d", name, got, want)
		}
	}
}

// TestConfigReadBounded: a config.json that never ends (/dev/zero) is
// refused past the limit instead of being read into memory.
func TestConfigReadBounded(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	dir := badLlamaDir(t, nil, nil)
	cfg := filepath.Join(dir, "config.json")
	if err := os.Remove(cfg); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", cfg); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := nn.LoadCausalLM(dir)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "config.json") {
		t.Fatalf("err = %v; want one naming config.json", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<20 {
		t.Errorf("reading /dev/zero as config.json allocated %d bytes", got)
	}
}
