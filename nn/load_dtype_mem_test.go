package nn_test

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
)

// llamaMem16ChildEnv makes the test binary, run again by
// TestLoadCausalLMBFloat16Memory, load the Llama in the directory it
// names as bfloat16 and print its memory use.
const llamaMem16ChildEnv = "WICK_TEST_LLAMA_MEM16_DIR"

// TestLoadCausalLMBFloat16Memory loads the Llama of TestLoadCausalLMMemory
// (54 MiB as float32) from a BF16 file as bfloat16 in a fresh process:
// the resident memory grows by about the bfloat16 model (half the float32
// one), and its peak by at most 0.6× the float32 model, so no float32
// copy of the model, nor of its largest tensor (the 8 MiB of the
// embeddings as bfloat16 would already be 0.15×), is ever held: what
// remains is the reader's chunk buffers (a few MiB) and the runtime.
func TestLoadCausalLMBFloat16Memory(t *testing.T) {
	if dir := os.Getenv(llamaMem16ChildEnv); dir != "" {
		runtime.GC()
		debug.FreeOSMemory()
		before := procStatusKB(t, "VmRSS")
		m, err := nn.LoadCausalLMWith(dir, nn.LoadOptions{DType: tensor.BFloat16})
		if err != nil {
			t.Fatal(err)
		}
		peak := procStatusKB(t, "VmHWM")
		after := procStatusKB(t, "VmRSS")
		fmt.Printf("MEM before=%d peak=%d after=%d params=%d bytes=%d\n", before, peak, after, nn.NumParams(m), nn.ParameterBytes(m))
		runtime.KeepAlive(m)
		return
	}
	if runtime.GOOS != "linux" {
		t.Skip("peak memory is read from /proc/self/status, which only Linux has")
	}
	if raceEnabled {
		t.Skip("the race detector's shadow memory inflates resident memory")
	}
	dir := t.TempDir()
	params := writeLlamaMemModel(t, dir, "BF16")
	cmd := exec.Command(os.Args[0], "-test.run=^TestLoadCausalLMBFloat16Memory$", "-test.count=1")
	cmd.Env = append(os.Environ(), llamaMem16ChildEnv+"="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var before, peak, after, n, bytes int64
	i := strings.Index(string(out), "MEM ")
	if i < 0 {
		t.Fatalf("child printed no MEM line:\n%s", out)
	}
	if _, err := fmt.Sscanf(string(out[i:]), "MEM before=%d peak=%d after=%d params=%d bytes=%d", &before, &peak, &after, &n, &bytes); err != nil {
		t.Fatalf("%v in %q", err, out)
	}
	if n != int64(params) || bytes != 2*int64(params) {
		t.Fatalf("loaded %d parameters of %d bytes, wrote %d of bfloat16", n, bytes, params)
	}
	f32KB := float64(params) * 4 / 1024
	t.Logf("float32 model %.1f MiB; RSS before %.1f MiB, peak %.1f MiB (+%.3f× the float32 model), after %.1f MiB",
		f32KB/1024, float64(before)/1024, float64(peak)/1024, float64(peak-before)/f32KB, float64(after)/1024)
	if float64(after-before) < 0.45*f32KB {
		t.Errorf("RSS grew by %d KiB only, less than the %.0f KiB bfloat16 model: the measurement misses the weights", after-before, f32KB/2)
	}
	if float64(peak-before) > 0.6*f32KB {
		t.Errorf("peak RSS grew by %d KiB while loading, more than 0.6× the %.0f KiB float32 model", peak-before, f32KB)
	}
}
