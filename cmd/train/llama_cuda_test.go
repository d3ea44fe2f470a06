//go:build cuda

package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wickml/wick/cuda"
	"github.com/wickml/wick/nn"
)

// TestFineTuneLlamaCUDA fine-tunes the random Llama (multi-query
// attention, llama3 rope scaling, tied head) and Qwen3 (grouped heads,
// q/k norms, head_dim 12, untied head) hub models with --device=cuda and
// with --device=cpu from the same seed: every logged training and
// evaluation loss agrees to 1e-4 relative. It runs on a GPU
// (scripts/device_check.sh) and on the emulated device
// (scripts/cuda_emu.sh); elsewhere it skips, or fails under
// WICK_REQUIRE_GPU=1.
func TestFineTuneLlamaCUDA(t *testing.T) {
	if _, err := cuda.Open(0); err != nil || !cuda.Available() {
		if os.Getenv("WICK_REQUIRE_GPU") == "1" {
			t.Fatalf("cuda: no usable GPU: %v (WICK_REQUIRE_GPU=1: a missing GPU fails the test)", err)
		}
		t.Skipf("cuda: no usable GPU (%v); the Llama fine-tuning runs on the CPU in TestFineTuneLlamaFamily", err)
	}
	for _, family := range []string{"llama", "qwen3"} {
		t.Run(family, func(t *testing.T) {
			tmp := t.TempDir()
			dir := writeLlamaHub(t, filepath.Join(tmp, family), family, nil)
			// undo writeLlamaHub's tenfold weights (for clear greedy
			// choices): with logits that large a few AdamW steps
			// magnify the devices' last-bit differences
			rewriteWeights(t, dir, func(sd nn.StateDict) {
				for k, v := range sd {
					sd[k] = v.DivScalar(10)
				}
			})
			losses := map[string][]float64{}
			for _, dev := range []string{"cuda", "cpu"} {
				run := filepath.Join(tmp, "run-"+dev)
				out := mustRun(t, ftArgs(dir, run, "--max_iters=6", "--eval_interval=3", "--block_size=16", "--device="+dev)...)
				if dev == "cuda" && !strings.Contains(out, "cuda:0") {
					t.Errorf("--device=cuda did not report training on cuda:0:\n%s", out)
				}
				for _, r := range readLog(t, run) {
					for _, l := range []*float64{r.Loss, r.TrainLoss, r.ValLoss} {
						if l != nil {
							losses[dev] = append(losses[dev], *l)
						}
					}
				}
			}
			g, c := losses["cuda"], losses["cpu"]
			if len(g) != len(c) || len(g) < 6 {
				t.Fatalf("logged losses: %d on cuda, %d on cpu", len(g), len(c))
			}
			for i := range g {
				if math.Abs(g[i]-c[i]) > 1e-4*math.Abs(c[i]) {
					t.Errorf("loss %d: cuda %v, cpu %v", i, g[i], c[i])
				}
			}
			t.Logf("cuda %v\ncpu  %v", g, c)
		})
	}
}
