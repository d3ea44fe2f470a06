package nn_test

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wickml/wick/nn"
)

// memChildEnv makes the test binary, run again by TestLoadPretrainedMemory,
// load the model in the directory it names and print its memory use.
const memChildEnv = "WICK_TEST_PRETRAINED_MEM_DIR"

// memSizesEnv, set to "vocab,n_positions,n_layer,n_embd", measures a model
// of other sizes, such as GPT-2's (50257,1024,12,768: 475 MiB).
const memSizesEnv = "WICK_TEST_PRETRAINED_MEM_SIZES"

// procStatusKB returns a field of /proc/self/status, in KiB.
func procStatusKB(t *testing.T, field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			v, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	t.Fatalf("no %s in /proc/self/status", field)
	return 0
}

// writeHubModel writes a random GPT-2 of the given sizes to dir in the
// hub's layout (Conv1D weights [in, out], mask buffers, no prefix) with
// every weight stored as dtype (F32 or F16), split into shards files, and
// returns the model's number of parameters.
func writeHubModel(t *testing.T, dir string, vocab, npos, nlayer, nembd int, dtype string, shards int) int {
	t.Helper()
	type tens struct {
		name  string
		shape []int
		dtype string
	}
	var all []tens
	add := func(name, dt string, shape ...int) {
		if shape == nil {
			shape = []int{} // a scalar: "shape":[]
		}
		all = append(all, tens{name, shape, dt})
	}
	add("wte.weight", dtype, vocab, nembd)
	add("wpe.weight", dtype, npos, nembd)
	for i := range nlayer {
		p := fmt.Sprintf("h.%d.", i)
		add(p+"ln_1.weight", dtype, nembd)
		add(p+"ln_1.bias", dtype, nembd)
		add(p+"attn.bias", "BOOL", 1, 1, npos, npos)
		add(p+"attn.masked_bias", "F32")
		add(p+"attn.c_attn.weight", dtype, nembd, 3*nembd)
		add(p+"attn.c_attn.bias", dtype, 3*nembd)
		add(p+"attn.c_proj.weight", dtype, nembd, nembd)
		add(p+"attn.c_proj.bias", dtype, nembd)
		add(p+"ln_2.weight", dtype, nembd)
		add(p+"ln_2.bias", dtype, nembd)
		add(p+"mlp.c_fc.weight", dtype, nembd, 4*nembd)
		add(p+"mlp.c_fc.bias", dtype, 4*nembd)
		add(p+"mlp.c_proj.weight", dtype, 4*nembd, nembd)
		add(p+"mlp.c_proj.bias", dtype, nembd)
	}
	add("ln_f.weight", dtype, nembd)
	add("ln_f.bias", dtype, nembd)

	params := 0
	weightMap := map[string]string{}
	per := (len(all) + shards - 1) / shards
	seed := uint32(1)
	for s := range shards {
		part := all[s*per : min((s+1)*per, len(all))]
		fname := "model.safetensors"
		if shards > 1 {
			fname = fmt.Sprintf("model-%05d-of-%05d.safetensors", s+1, shards)
		}
		hdr := map[string]any{"__metadata__": map[string]string{"format": "pt"}}
		off := 0
		for _, e := range part {
			n := 1
			for _, d := range e.shape {
				n *= d
			}
			size := map[string]int{"F32": 4, "F16": 2, "BOOL": 1}[e.dtype]
			hdr[e.name] = map[string]any{"dtype": e.dtype, "shape": e.shape, "data_offsets": []int{off, off + n*size}}
			off += n * size
			weightMap[e.name] = fname
			if e.dtype != "BOOL" && !strings.HasSuffix(e.name, "masked_bias") {
				params += n
			}
		}
		h, _ := json.Marshal(hdr)
		for len(h)%8 != 0 {
			h = append(h, ' ')
		}
		f, err := os.Create(filepath.Join(dir, fname))
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriterSize(f, 1<<20)
		binary.Write(w, binary.LittleEndian, uint64(len(h)))
		w.Write(h)
		for _, e := range part {
			n := 1
			for _, d := range e.shape {
				n *= d
			}
			for range n {
				seed = seed*1664525 + 1013904223
				v := float32(int32(seed>>8)-1<<23) / (1 << 26) // in [-0.125, 0.125)
				switch e.dtype {
				case "F32":
					binary.Write(w, binary.LittleEndian, math.Float32bits(v))
				case "F16": // v is well inside the normal range of a half
					b := math.Float32bits(v)
					exp := int(b>>23&0xff) - 127 + 15
					h := uint16(b>>16&0x8000) | uint16(b>>13&0x3ff)
					if exp > 0 {
						h |= uint16(exp) << 10
					} else {
						h &= 0x8000
					}
					binary.Write(w, binary.LittleEndian, h)
				case "BOOL":
					w.WriteByte(1)
				}
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	if shards > 1 {
		b, _ := json.Marshal(map[string]any{"metadata": map[string]any{}, "weight_map": weightMap})
		os.WriteFile(filepath.Join(dir, "model.safetensors.index.json"), b, 0o644)
	}
	cfg := fmt.Sprintf(`{"model_type":"gpt2","vocab_size":%d,"n_positions":%d,"n_layer":%d,"n_head":4,"n_embd":%d,"layer_norm_epsilon":1e-05,"activation_function":"gelu_new"}`, vocab, npos, nlayer, nembd)
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return params
}

// TestLoadPretrainedMemory loads models of a few tens of MB (see
// memSizesEnv for others) in a fresh process, from F32 and F16 files, and
// checks that its peak resident memory (VmHWM) grows by at
// most 1.2× the model's float32 size over what it held before, while the
// loaded model itself stays resident.
func TestLoadPretrainedMemory(t *testing.T) {
	if dir := os.Getenv(memChildEnv); dir != "" {
		runtime.GC()
		debug.FreeOSMemory()
		before := procStatusKB(t, "VmRSS")
		start := time.Now()
		m, err := nn.LoadPretrained(dir)
		if err != nil {
			t.Fatal(err)
		}
		took := time.Since(start)
		peak := procStatusKB(t, "VmHWM")
		after := procStatusKB(t, "VmRSS")
		fmt.Printf("MEM before=%d peak=%d after=%d params=%d took=%d\n", before, peak, after, nn.NumParams(m), took)
		runtime.KeepAlive(m)
		return
	}
	if runtime.GOOS != "linux" {
		t.Skip("peak memory is read from /proc/self/status, which only Linux has")
	}
	if raceEnabled {
		t.Skip("the race detector's shadow memory inflates resident memory")
	}
	for _, c := range []struct {
		name   string
		dtype  string
		shards int
	}{{"f32", "F32", 1}, {"f16 sharded", "F16", 3}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			sizes := [4]int{16384, 512, 8, 256} // vocab, n_positions, n_layer, n_embd: 40 MiB
			if env := os.Getenv(memSizesEnv); env != "" {
				if _, err := fmt.Sscanf(env, "%d,%d,%d,%d", &sizes[0], &sizes[1], &sizes[2], &sizes[3]); err != nil {
					t.Fatalf("%s=%q: want vocab,n_positions,n_layer,n_embd: %v", memSizesEnv, env, err)
				}
			}
			params := writeHubModel(t, dir, sizes[0], sizes[1], sizes[2], sizes[3], c.dtype, c.shards)
			cmd := exec.Command(os.Args[0], "-test.run=^TestLoadPretrainedMemory$", "-test.count=1")
			cmd.Env = append(os.Environ(), memChildEnv+"="+dir)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("child: %v\n%s", err, out)
			}
			var before, peak, after, n int64
			var took time.Duration
			i := strings.Index(string(out), "MEM ")
			if i < 0 {
				t.Fatalf("child printed no MEM line:\n%s", out)
			}
			if _, err := fmt.Sscanf(string(out[i:]), "MEM before=%d peak=%d after=%d params=%d took=%d", &before, &peak, &after, &n, &took); err != nil {
				t.Fatalf("%v in %q", err, out)
			}
			if n != int64(params) {
				t.Fatalf("loaded %d parameters, wrote %d", n, params)
			}
			modelKB := float64(params) * 4 / 1024
			t.Logf("float32 model %.1f MiB; RSS before loading %.1f MiB, peak %.1f MiB (+%.2f× the model), after %.1f MiB; loading took %v",
				modelKB/1024, float64(before)/1024, float64(peak)/1024, float64(peak-before)/modelKB, float64(after)/1024, took)
			if float64(after-before) < 0.9*modelKB {
				t.Errorf("RSS grew by %d KiB only, less than the %.0f KiB model: the measurement misses the weights", after-before, modelKB)
			}
			if float64(peak-before) > 1.2*modelKB {
				t.Errorf("peak RSS grew by %d KiB while loading, more than 1.2× the %.0f KiB float32 model", peak-before, modelKB)
			}
		})
	}
}
