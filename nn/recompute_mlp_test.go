package nn

import (
	"fmt"
	"runtime"
	"slices"
	"testing"

	"github.com/wickml/wick/autograd"
	"github.com/wickml/wick/tensor"
)

// mlpRecomputeCase is one model a frozen GatedMLP's recomputation is
// checked on: LoRA targets (none: a full fine-tune), their dropout, and
// whether the MLPs recompute gate and up.
type mlpRecomputeCase struct {
	name      string
	modelType string
	targets   []string
	dropout   float32
	recompute bool
}

var mlpRecomputeCases = []mlpRecomputeCase{
	{"llama, LoRA on the attention", "llama", []string{"q_proj", "k_proj", "v_proj", "o_proj"}, 0, true},
	{"llama, LoRA on the attention, dropout", "llama", []string{"q_proj", "k_proj", "v_proj", "o_proj"}, 0.3, true},
	// adapters on gate_proj and up_proj over a frozen base: recomputed
	// with the adapters and their dropout masks
	{"qwen3, LoRA on every projection, dropout", "qwen3", []string{"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}, 0.3, true},
	{"llama, LoRA on down_proj only, dropout", "llama", []string{"down_proj"}, 0.3, true},
	{"llama, full fine-tune", "llama", nil, 0, false},
}

// mlpRecomputeRun trains one step of a small Llama-family model as c says,
// its frozen MLPs keeping gate and up (keep) or recomputing them, and
// returns the loss, the gradients of the trained parameters and whether
// the first layer's MLP recomputes.
func mlpRecomputeRun(t *testing.T, c mlpRecomputeCase, keep bool) (float32, [][]float32, bool) {
	t.Helper()
	cfg := LlamaConfig{ModelType: c.modelType, VocabSize: 17, HiddenSize: 16, IntermediateSize: 24, NumHiddenLayers: 3,
		NumAttentionHeads: 4, NumKeyValueHeads: 2, HeadDim: 8, MaxPositionEmbeddings: 16, RMSNormEps: 1e-6, RopeTheta: 10000,
		QKVBias: c.modelType == "qwen3", QKNorm: c.modelType == "qwen3", MLPBias: c.modelType == "llama"}
	m := NewLlamaWith(cfg, tensor.NewGenerator(31))
	for _, l := range m.Layers {
		l.MLP.KeepActivations = keep
	}
	params := m.Parameters()
	if c.targets != nil {
		l, err := ApplyLoRA(m, LoRAConfig{R: 2, Alpha: 4, Dropout: c.dropout, TargetModules: c.targets, Gen: tensor.NewGenerator(32)})
		if err != nil {
			t.Fatal(err)
		}
		randomizeB(l, 33)
		params = l.Parameters()
	}
	loss, grads := stepGrads(t, m, params, fmt.Sprintf("%s (keep %v)", c.name, keep))
	return loss, grads, m.Layers[0].MLP.recomputesGate()
}

// A frozen GatedMLP recomputes gate and up in the backward pass, and the
// loss and every gradient are bit for bit those of the plain graph, with
// the adapters' dropout on, with adapters on the MLP's own projections,
// and on a full fine-tune (where nothing is recomputed).
func TestGatedMLPRecomputeBitIdentical(t *testing.T) {
	for _, c := range mlpRecomputeCases {
		l0, g0, kept := mlpRecomputeRun(t, c, true)
		l1, g1, recomputed := mlpRecomputeRun(t, c, false)
		if kept || recomputed != c.recompute {
			t.Errorf("%s: recomputes %v with KeepActivations, %v without; want false, %v", c.name, kept, recomputed, c.recompute)
		}
		sameStep(t, c.name+", recomputed against kept", l1, l0, g1, g0)
	}
	// the dropout must change the gradients, or the cases with dropout
	// prove nothing about replaying its masks
	c := mlpRecomputeCases[2]
	_, withDrop, _ := mlpRecomputeRun(t, c, false)
	c.dropout = 0
	_, without, _ := mlpRecomputeRun(t, c, false)
	if slices.Equal(withDrop[0], without[0]) {
		t.Error("the adapters' dropout did not change the gradients")
	}
}

// The MLP recomputes only when gate_proj's and up_proj's own parameters
// are frozen, while recording, and outside a region that is recomputed
// whole.
func TestGatedMLPRecomputesWhen(t *testing.T) {
	mlp := NewGatedMLP(8, 12, true, tensor.NewGenerator(1))
	if mlp.recomputesGate() {
		t.Error("a trained MLP recomputes")
	}
	for _, p := range mlp.Parameters() {
		p.SetRequiresGrad(false)
	}
	if !mlp.recomputesGate() {
		t.Error("a frozen MLP does not recompute")
	}
	mlp.DownProj.Weight.SetRequiresGrad(true) // down_proj's input is kept by its own gradient
	if !mlp.recomputesGate() {
		t.Error("a frozen gate with a trained down_proj does not recompute")
	}
	mlp.UpProj.Bias.SetRequiresGrad(true)
	if mlp.recomputesGate() {
		t.Error("an MLP with a trained up_proj bias recomputes")
	}
	mlp.UpProj.Bias.SetRequiresGrad(false)
	autograd.NoGrad(func() {
		if mlp.recomputesGate() {
			t.Error("a frozen MLP recomputes without recording")
		}
	})
	recomputedRegion(func() *tensor.Tensor {
		if mlp.recomputesGate() {
			t.Error("a frozen MLP recomputes inside a recomputed region")
		}
		return nil
	})
	mlp.KeepActivations = true
	if mlp.recomputesGate() {
		t.Error("a frozen MLP recomputes with KeepActivations")
	}
}

// The recomputing MLP keeps its input, not its gate and up products (nor
// the Checkpoint's output, which only the frozen down_proj reads): the live
// heap that many small forward passes leave is smaller by about the
// products' size. The tensors are below the CPU free list's smallest
// buffer, so only the graphs hold them.
func TestGatedMLPRecomputeKeepsLess(t *testing.T) {
	const graphs, tokens, hidden, inter = 400, 4, 16, 255 // gate and up: 1020 floats each
	gen := tensor.NewGenerator(2)
	mlp := NewGatedMLP(hidden, inter, false, gen)
	for _, p := range mlp.Parameters() {
		p.SetRequiresGrad(false)
	}
	x := gen.Randn(tokens, hidden).RequiresGrad()
	live := func() float64 {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return float64(ms.HeapAlloc)
	}
	kept := func(keep bool) float64 {
		mlp.KeepActivations = keep
		losses := make([]*tensor.Tensor, graphs)
		before := live()
		for i := range losses {
			// the input, kept by neither a frozen product nor Sum
			losses[i] = mlp.Forward(x.MulScalar(1)).Sum()
		}
		after := live()
		losses[0].Backward() // the graphs are whole
		if x.Grad() == nil {
			t.Fatal("no gradient reached the input")
		}
		x.ZeroGrad()
		runtime.KeepAlive(losses)
		return (after - before) / graphs
	}
	plain, recomputed := kept(true), kept(false)
	products := 2.0 * tokens * inter * 4
	if plain-recomputed < 0.75*products {
		t.Errorf("a forward pass keeps %.0f bytes recomputing and %.0f keeping gate and up; want %.0f less", recomputed, plain, products)
	}
}
