package nn_test

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/safetensors"
)

// llamaMemChildEnv makes the test binary, run again by
// TestLoadCausalLMMemory, load the Llama in the directory it names and
// print its memory use.
const llamaMemChildEnv = "WICK_TEST_LLAMA_MEM_DIR"

// writeLlamaMemModel writes a Llama of about 14M parameters (untied head,
// GQA) to dir with every weight stored as dtype, and returns its number
// of parameters. The values are a repeating pattern: the test measures
// memory, not numbers.
func writeLlamaMemModel(t *testing.T, dir, dtype string) int {
	t.Helper()
	cfg := map[string]any{"model_type": "llama", "vocab_size": 16384, "hidden_size": 256, "intermediate_size": 688,
		"num_hidden_layers": 8, "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 512,
		"tie_word_embeddings": false}
	b, _ := json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(dir, "config.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	lc, err := nn.ReadLlamaConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	es := map[string]int{"F32": 4, "BF16": 2}[dtype]
	var ts []safetensors.Tensor
	params := 0
	for _, p := range nn.NewLlamaWith(nn.LlamaConfig{ModelType: "llama", VocabSize: 8, HiddenSize: 4, IntermediateSize: 4,
		NumHiddenLayers: lc.NumHiddenLayers, NumAttentionHeads: 2, NumKeyValueHeads: 1, HeadDim: 2, MaxPositionEmbeddings: 4,
		RopeTheta: 1e4}, nil).NamedParameters() {
		shape := llamaShape(lc, p.Name)
		n := 1
		for _, d := range shape {
			n *= d
		}
		params += n
		ts = append(ts, safetensors.Tensor{Name: p.Name, DType: dtype, Shape: shape, Data: func(w io.Writer) error {
			buf := make([]byte, 64<<10)
			for i := 0; i < len(buf); i += es {
				if es == 4 {
					binary.LittleEndian.PutUint32(buf[i:], math.Float32bits(float32(i%7)/8))
				} else {
					binary.LittleEndian.PutUint16(buf[i:], 0x3e80)
				}
			}
			for left := n * es; left > 0; left -= len(buf) {
				if _, err := w.Write(buf[:min(left, len(buf))]); err != nil {
					return err
				}
			}
			return nil
		}})
	}
	f, err := os.Create(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := safetensors.Write(f, ts, nil); err != nil {
		t.Fatal(err)
	}
	return params
}

// llamaShape returns the shape of parameter name in a Llama of c.
func llamaShape(c nn.LlamaConfig, name string) []int {
	h, q, kv := c.HiddenSize, c.NumAttentionHeads*c.HeadDim, c.NumKeyValueHeads*c.HeadDim
	switch {
	case strings.HasSuffix(name, "embed_tokens.weight"), name == "lm_head.weight":
		return []int{c.VocabSize, h}
	case strings.HasSuffix(name, "q_proj.weight"):
		return []int{q, h}
	case strings.HasSuffix(name, "k_proj.weight"), strings.HasSuffix(name, "v_proj.weight"):
		return []int{kv, h}
	case strings.HasSuffix(name, "o_proj.weight"):
		return []int{h, q}
	case strings.HasSuffix(name, "gate_proj.weight"), strings.HasSuffix(name, "up_proj.weight"):
		return []int{c.IntermediateSize, h}
	case strings.HasSuffix(name, "down_proj.weight"):
		return []int{h, c.IntermediateSize}
	}
	return []int{h} // the norms
}

// TestLoadCausalLMMemory loads a Llama of 54 MiB (as float32) from F32 and
// BF16 files in a fresh process and checks that its peak resident memory
// grows by at most 1.1× the model's float32 size.
func TestLoadCausalLMMemory(t *testing.T) {
	if dir := os.Getenv(llamaMemChildEnv); dir != "" {
		runtime.GC()
		debug.FreeOSMemory()
		before := procStatusKB(t, "VmRSS")
		m, err := nn.LoadCausalLM(dir)
		if err != nil {
			t.Fatal(err)
		}
		peak := procStatusKB(t, "VmHWM")
		after := procStatusKB(t, "VmRSS")
		fmt.Printf("MEM before=%d peak=%d after=%d params=%d\n", before, peak, after, nn.NumParams(m))
		runtime.KeepAlive(m)
		return
	}
	if runtime.GOOS != "linux" {
		t.Skip("peak memory is read from /proc/self/status, which only Linux has")
	}
	if raceEnabled {
		t.Skip("the race detector's shadow memory inflates resident memory")
	}
	for _, dtype := range []string{"F32", "BF16"} {
		t.Run(dtype, func(t *testing.T) {
			dir := t.TempDir()
			params := writeLlamaMemModel(t, dir, dtype)
			cmd := exec.Command(os.Args[0], "-test.run=^TestLoadCausalLMMemory$", "-test.count=1")
			cmd.Env = append(os.Environ(), llamaMemChildEnv+"="+dir)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("child: %v\n%s", err, out)
			}
			var before, peak, after, n int64
			i := strings.Index(string(out), "MEM ")
			if i < 0 {
				t.Fatalf("child printed no MEM line:\n%s", out)
			}
			if _, err := fmt.Sscanf(string(out[i:]), "MEM before=%d peak=%d after=%d params=%d", &before, &peak, &after, &n); err != nil {
				t.Fatalf("%v in %q", err, out)
			}
			if n != int64(params) {
				t.Fatalf("loaded %d parameters, wrote %d", n, params)
			}
			modelKB := float64(params) * 4 / 1024
			t.Logf("float32 model %.1f MiB; RSS before %.1f MiB, peak %.1f MiB (+%.3f× the model), after %.1f MiB",
				modelKB/1024, float64(before)/1024, float64(peak)/1024, float64(peak-before)/modelKB, float64(after)/1024)
			if float64(after-before) < 0.9*modelKB {
				t.Errorf("RSS grew by %d KiB only, less than the %.0f KiB model: the measurement misses the weights", after-before, modelKB)
			}
			if float64(peak-before) > 1.1*modelKB {
				t.Errorf("peak RSS grew by %d KiB while loading, more than 1.1× the %.0f KiB float32 model", peak-before, modelKB)
			}
		})
	}
}
