//go:build cuda

package main

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/wickml/wick/cuda"
)

// TestTrain16CUDA trains with autocast on the GPU through the CLI.
// bfloat16: `train --dtype=bfloat16 --device=cuda` logs the losses of
// --device=cpu (the same rounded operands, float32 sums in another
// order: 1e-3 relative) and says it trains in bfloat16 autocast on
// cuda:0. float16 (refused on the cpu, TestDTypeRefused): the loss falls,
// every step's record carries the loss scale (PyTorch's 2¹⁶; no step of
// this small model overflows), the checkpoint records the dtype and the
// scaler's state, a resume refuses another dtype and restores the
// scaler, so that a run resumed at 10 ends with the uninterrupted run's
// scale and growth tracker (20 steps without overflow, not 10) and its
// losses. It runs on a GPU (scripts/device_check.sh) and on the emulated
// device (scripts/cuda_emu.sh); elsewhere it skips, or fails under
// WICK_REQUIRE_GPU=1.
func TestTrain16CUDA(t *testing.T) {
	if _, err := cuda.Open(0); err != nil || !cuda.Available() {
		if os.Getenv("WICK_REQUIRE_GPU") == "1" {
			t.Fatalf("cuda: no usable GPU: %v (WICK_REQUIRE_GPU=1: a missing GPU fails the test)", err)
		}
		t.Skipf("cuda: no usable GPU (%v); bfloat16 training runs on the CPU in TestBF16TrainResume", err)
	}
	common := []string{"--eval_interval=10", "--dropout=0"}
	t.Run("bfloat16", func(t *testing.T) {
		losses := map[string][]float64{}
		for _, dev := range []string{"cuda", "cpu"} {
			dir := t.TempDir()
			out := mustRun(t, tinyArgs(dir, append(common, "--max_iters=20", "--dtype=bfloat16", "--device="+dev)...)...)
			if !strings.Contains(out, "in bfloat16 autocast") {
				t.Errorf("--device=%s does not say it trains in bfloat16:\n%s", dev, out)
			}
			if dev == "cuda" && !strings.Contains(out, "parameters on cuda:0") {
				t.Errorf("--device=cuda did not train on cuda:0:\n%s", out)
			}
			for _, r := range readLog(t, dir) {
				for _, l := range []*float64{r.Loss, r.TrainLoss, r.ValLoss} {
					if l != nil {
						losses[dev] = append(losses[dev], *l)
					}
				}
			}
		}
		g, c := losses["cuda"], losses["cpu"]
		if len(g) != len(c) || len(g) < 20 {
			t.Fatalf("%d logged losses on cuda, %d on cpu; want the same number, at least 20", len(g), len(c))
		}
		for i := range c {
			if math.Abs(g[i]-c[i]) > 1e-3*c[i] {
				t.Errorf("loss %d: %v on cuda, %v on cpu (more than 1e-3 relative apart)", i, g[i], c[i])
			}
		}
	})
	t.Run("float16", func(t *testing.T) {
		f16 := append(common, "--dtype=float16", "--device=cuda")
		full := t.TempDir()
		out := mustRun(t, tinyArgs(full, append(f16, "--max_iters=20")...)...)
		if !strings.Contains(out, "in float16 autocast with loss scaling (scale 65536)") || !strings.Contains(out, "parameters on cuda:0") {
			t.Errorf("the run does not say it trains in float16 with loss scaling on cuda:0:\n%s", out)
		}
		recs := readLog(t, full)
		var train []logRecord
		for _, r := range recs {
			if r.Kind == "train" {
				train = append(train, r)
			}
		}
		if len(train) != 20 {
			t.Fatalf("%d train records, want 20", len(train))
		}
		for _, r := range train {
			if r.LossScale != 65536 || r.Skipped {
				t.Errorf("iteration %d: loss scale %v, skipped %v; want 65536 and not skipped", r.Iter, r.LossScale, r.Skipped)
			}
		}
		if !(*train[19].Loss < *train[0].Loss) {
			t.Errorf("the float16 loss did not fall: %v → %v", *train[0].Loss, *train[19].Loss)
		}
		_, meta, err := readCheckpoint(ckptPath(full))
		if err != nil {
			t.Fatal(err)
		}
		if meta.Options.Dtype != "float16" || meta.Scaler == nil || meta.Scaler.Scale != 65536 || meta.Scaler.GrowthTracker != 20 {
			t.Fatalf("the checkpoint records dtype %q and scaler %+v; want float16, scale 65536 and growth tracker 20", meta.Options.Dtype, meta.Scaler)
		}

		split := t.TempDir()
		mustRun(t, tinyArgs(split, append(f16, "--max_iters=10", "--always_save_checkpoint")...)...)
		if _, meta, err := readCheckpoint(ckptPath(split)); err != nil || meta.Scaler == nil || meta.Scaler.GrowthTracker != 10 {
			t.Fatalf("the checkpoint at 10 holds scaler %+v (%v); want growth tracker 10", meta.Scaler, err)
		}
		_, errOut, code := runCLI(t, "--resume", "--out_dir="+split, "--max_iters=20", "--device=cuda", "--dtype=bfloat16")
		if want := "--dtype=bfloat16 does not match the checkpoint"; code == 0 || !strings.Contains(errOut, want) || !strings.Contains(errOut, "dtype=float16") {
			t.Errorf("resume with --dtype=bfloat16: exit %d, stderr %q; want %q naming both dtypes", code, errOut, want)
		}
		mustRun(t, "--resume", "--out_dir="+split, "--max_iters=20", "--device=cuda", "--dtype=float16", "--always_save_checkpoint")
		_, resumed, err := readCheckpoint(ckptPath(split))
		if err != nil {
			t.Fatal(err)
		}
		if resumed.Options.Dtype != "float16" || resumed.Scaler == nil || *resumed.Scaler != *meta.Scaler {
			t.Errorf("the resumed run's checkpoint records dtype %q and scaler %+v; want float16 and the uninterrupted run's %+v", resumed.Options.Dtype, resumed.Scaler, *meta.Scaler)
		}
		a, b := trainLosses(recs), trainLosses(readLog(t, split))
		for it := range 20 {
			if math.Abs(a[it]-b[it]) > 1e-3*a[it] {
				t.Errorf("iteration %d: loss %v uninterrupted, %v resumed", it, a[it], b[it])
			}
		}
	})
}
