//go:build cuda

package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wickml/wick/cuda"
	"github.com/wickml/wick/internal/approx"
	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/optim"
	"github.com/wickml/wick/tensor"
)

// needGPU skips the test without a usable GPU (or fails it under
// WICK_REQUIRE_GPU=1).
func needGPU(t *testing.T) {
	t.Helper()
	if _, err := cuda.Open(0); err != nil || !cuda.Available() {
		if os.Getenv("WICK_REQUIRE_GPU") == "1" {
			t.Fatalf("cuda: no usable GPU: %v (WICK_REQUIRE_GPU=1: a missing GPU fails the test)", err)
		}
		t.Skipf("cuda: no usable GPU (%v); LoRA training runs on the CPU in TestLoRALlama and TestLoRAFineTune", err)
	}
}

// TestLoRACUDA trains LoRA adapters (q_proj and v_proj, rank 4) on a small
// Qwen3-shaped model for three AdamW steps on the GPU and on the CPU from
// the same weights and adapters: every step's loss and every adapter
// gradient agree within the suite's module tolerance (1e-4), the frozen
// base gets no gradient and stays where it was; then `train
// --init_from=DIR --lora_rank --device=cuda` logs the losses of
// --device=cpu (1e-4 relative) and writes the same adapter within 1e-4. It
// runs on a GPU (scripts/device_check.sh) and on the emulated device
// (scripts/cuda_emu.sh); elsewhere it skips, or fails under
// WICK_REQUIRE_GPU=1.
func TestLoRACUDA(t *testing.T) {
	needGPU(t)
	cfg := nn.LlamaConfig{ModelType: "qwen3", VocabSize: 19, HiddenSize: 16, IntermediateSize: 24, NumHiddenLayers: 2,
		NumAttentionHeads: 4, NumKeyValueHeads: 2, HeadDim: 8, MaxPositionEmbeddings: 16, RMSNormEps: 1e-6, RopeTheta: 10000}
	idx := tensor.FromInts([]int{1, 5, 3, 16, 0, 2, 7, 7, 9, 11, 4, 18, 6, 3, 2, 8, 12, 1}, 2, 9)
	type run struct {
		losses []float32
		grads  [][]*tensor.Tensor // per step, per adapter tensor, on the CPU
		base   [][]float32
	}
	train := func(dev tensor.Device) run {
		m := nn.NewLlamaWith(cfg, tensor.NewGenerator(4))
		if err := nn.To(m, dev); err != nil {
			t.Fatal(err)
		}
		l, err := nn.ApplyLoRA(m, nn.LoRAConfig{R: 4, Alpha: 8, TargetModules: []string{"q_proj", "v_proj"}, Gen: tensor.NewGenerator(5)})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range l.Parameters() {
			if p.Device() != dev {
				t.Fatalf("adapter on %s, the model on %s", p.Device(), dev)
			}
		}
		opt := optim.NewAdamW(l.Parameters(), optim.AdamWConfig{LR: 1e-2, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8})
		x, y := idx.Slice(1, 0, 8).To(dev), idx.Slice(1, 1, 9).To(dev)
		var r run
		m.Train()
		for step := 0; step < 3; step++ {
			opt.ZeroGrad()
			loss := m.Loss(x, y)
			loss.Backward()
			r.losses = append(r.losses, loss.Item())
			var gs []*tensor.Tensor
			for _, p := range l.NamedParameters() {
				if p.Param.Grad() == nil {
					t.Fatalf("%s, step %d: %s got no gradient", dev, step, p.Name)
				}
				gs = append(gs, p.Param.Grad().To(tensor.CPU))
			}
			r.grads = append(r.grads, gs)
			opt.Step()
		}
		for _, p := range m.NamedParameters() {
			if p.Param.Grad() != nil {
				t.Errorf("%s: frozen %s got a gradient", dev, p.Name)
			}
			r.base = append(r.base, p.Param.To(tensor.CPU).Float32s())
		}
		return r
	}
	g, c := train(tensor.CUDA(0)), train(tensor.CPU)
	for s := range c.losses {
		approx.EqualScalar(t, "loss", float64(g.losses[s]), float64(c.losses[s]), 1e-4, 0)
		for i, want := range c.grads[s] {
			w := want.Float32s()
			scale := 0.0
			for _, v := range w {
				scale = math.Max(scale, math.Abs(float64(v)))
			}
			if s > 0 && scale == 0 {
				t.Fatalf("step %d: adapter tensor %d has a zero gradient on the cpu", s, i)
			}
			approx.EqualTensor(t, "adapter gradient", g.grads[s][i], want, 1e-4, 1e-5*scale)
		}
	}
	for i, w := range c.base {
		approx.Equal(t, "frozen base weight", g.base[i], w, 0, 0)
	}
	t.Logf("losses: cuda %v, cpu %v", g.losses, c.losses)

	// the CLI: train --lora_rank on a hub model, cuda against cpu
	tmp := t.TempDir()
	dir := writeLlamaHub(t, filepath.Join(tmp, "base"), "llama", nil)
	rewriteWeights(t, dir, func(sd nn.StateDict) { // as TestFineTuneLlamaCUDA: no tenfold logits
		for k, v := range sd {
			sd[k] = v.DivScalar(10)
		}
	})
	logged := map[string][]float64{}
	adapters := map[string]nn.StateDict{}
	for _, dev := range []string{"cuda", "cpu"} {
		out := filepath.Join(tmp, "run-"+dev)
		stdout := mustRun(t, ftArgs(dir, out, "--max_iters=4", "--eval_interval=2", "--block_size=16", "--lora_rank=4",
			"--lora_targets=q_proj,v_proj", "--learning_rate=1e-2", "--num_samples=0", "--device="+dev)...)
		if dev == "cuda" && !strings.Contains(stdout, "cuda:0") {
			t.Errorf("--device=cuda did not report training on cuda:0:\n%s", stdout)
		}
		for _, r := range readLog(t, out) {
			for _, l := range []*float64{r.Loss, r.TrainLoss, r.ValLoss} {
				if l != nil {
					logged[dev] = append(logged[dev], *l)
				}
			}
		}
		sd, _, err := nn.LoadStateDictFile(filepath.Join(out, nn.AdapterWeightsFile))
		if err != nil {
			t.Fatal(err)
		}
		adapters[dev] = sd
	}
	lg, lc := logged["cuda"], logged["cpu"]
	if len(lg) != len(lc) || len(lg) < 4 {
		t.Fatalf("logged losses: %d on cuda, %d on cpu", len(lg), len(lc))
	}
	for i := range lg {
		if math.Abs(lg[i]-lc[i]) > 1e-4*math.Abs(lc[i]) {
			t.Errorf("train loss %d: cuda %v, cpu %v", i, lg[i], lc[i])
		}
	}
	if len(adapters["cuda"]) != len(adapters["cpu"]) || len(adapters["cpu"]) != 8 {
		t.Fatalf("adapter tensors: %d from cuda, %d from cpu, want 8", len(adapters["cuda"]), len(adapters["cpu"]))
	}
	for name, want := range adapters["cpu"] {
		got, ok := adapters["cuda"][name]
		if !ok {
			t.Fatalf("the cuda run's adapter lacks %s", name)
		}
		approx.EqualTensor(t, name, got, want, 1e-4, 1e-4)
	}
}
