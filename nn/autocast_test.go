package nn_test

import (
	"encoding/json"
	"math"
	"path/filepath"
	"testing"

	"github.com/wickml/wick/internal/approx"
	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
)

// relErr is ‖got − want‖ / ‖want‖ over all elements.
func relErr(got, want *tensor.Tensor) float64 {
	g, w := got.Float32s(), want.Float32s()
	var d, n float64
	for i := range w {
		d += (float64(g[i]) - float64(w[i])) * (float64(g[i]) - float64(w[i]))
		n += float64(w[i]) * float64(w[i])
	}
	return math.Sqrt(d / n)
}

// TestAutocastStepGolden takes one training step inside
// tensor.Autocast(BFloat16) of the GPT of testdata/nn/gpt_bias.safetensors
// and of the Llama of testdata/llama/llama_gqa, as
// scripts/gen_golden_autocast.py does in PyTorch 1.13: the loss and every
// gradient equal its transcription of Wick's rules (emu.*) to float32
// tolerances, and torch.autocast's step (ac.*, whose products return
// bfloat16) to bfloat16 tolerances; they also differ from the float32
// step by the size of bfloat16 rounding, so the products did round.
func TestAutocastStepGolden(t *testing.T) {
	t.Run("gpt", func(t *testing.T) {
		m := loraBase(t)
		m.Train()
		checkAutocastStep(t, "gpt_step.safetensors", m, m.ForwardLoss, 2e-3, 1.5e-2)
	})
	t.Run("llama", func(t *testing.T) {
		m, err := nn.LoadCausalLM(llamaDir("llama_gqa"))
		if err != nil {
			t.Fatal(err)
		}
		l := m.(*nn.Llama)
		forward := func(idx, targets *tensor.Tensor) (*tensor.Tensor, *tensor.Tensor) {
			return l.Forward(idx), l.Loss(idx, targets)
		}
		// four times the GPT's rounding (|ac − fp32| is 1–2%): the
		// tolerances scale with it
		checkAutocastStep(t, "llama_step.safetensors", l, forward, 2e-3, 4e-2)
	})
}

// checkAutocastStep runs forward (logits and loss) inside a region on the
// golden file's batch and compares with its emu.*, ac.* and fp32.*
// results: the loss within lossTol (relative) and each gradient within
// acTol (relative norm) of torch.autocast's.
func checkAutocastStep(t *testing.T, file string, m interface {
	NamedParameters() []nn.NamedParam
}, forward func(idx, targets *tensor.Tensor) (*tensor.Tensor, *tensor.Tensor), lossTol, acTol float64) {
	g, meta, err := nn.LoadStateDictFile(filepath.Join("..", "testdata", "autocast", file))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	if err := json.Unmarshal([]byte(meta["named_parameters"]), &names); err != nil {
		t.Fatal(err)
	}
	var logits, loss *tensor.Tensor
	tensor.Autocast(tensor.BFloat16, func() {
		logits, loss = forward(get(t, g, "idx"), get(t, g, "targets"))
	})
	if logits.DType() != tensor.Float32 || loss.DType() != tensor.Float32 {
		t.Fatalf("logits %s, loss %s: want float32", logits.DType(), loss.DType())
	}
	loss.Backward()
	approx.EqualTensor(t, "loss vs emu", loss, get(t, g, "emu.loss"), 1e-5, 0)
	approx.EqualTensor(t, "logits vs emu", logits, get(t, g, "emu.logits"), 1e-3, 1e-4)
	approx.EqualTensor(t, "loss vs torch.autocast", loss, get(t, g, "ac.loss"), lossTol, 0)
	params := map[string]*tensor.Tensor{}
	for _, p := range m.NamedParameters() {
		params[p.Name] = p.Param
	}
	if len(names) == 0 || len(names) != len(params) {
		t.Fatalf("%d parameter names in the golden file, the model has %d", len(names), len(params))
	}
	for _, name := range names {
		p := params[name]
		if p == nil || p.Grad() == nil {
			t.Fatalf("%s: no parameter or no gradient", name)
		}
		gr := p.Grad()
		if gr.DType() != tensor.Float32 || p.DType() != tensor.Float32 {
			t.Errorf("%s: parameter %s, gradient %s: want float32 master weights and gradients", name, p.DType(), gr.DType())
		}
		emu, ac, fp := get(t, g, "emu.grad."+name), get(t, g, "ac.grad."+name), get(t, g, "fp32.grad."+name)
		// float32 sums in another order, then rounded to bfloat16 in
		// the backward products: a rare gradient lands on the other
		// side of a rounding boundary, so the norm, not every element
		// (about 1e-7 measured)
		if e := relErr(gr, emu); e > 1e-5 {
			t.Errorf("%s: ‖wick − emu‖/‖emu‖ = %.2e, want ≤ 1e-5", name, e)
		}
		if e := relErr(gr, ac); e > acTol {
			t.Errorf("%s: ‖wick − torch.autocast‖/‖torch.autocast‖ = %.2e, want ≤ %.1e (bfloat16: 2⁻⁸ = 3.9e-3 per rounding)", name, e, acTol)
		}
		if e := relErr(gr, fp); e < 1e-4 {
			t.Errorf("%s: ‖wick − fp32‖/‖fp32‖ = %.2e: the products did not round to bfloat16", name, e)
		}
	}
}
