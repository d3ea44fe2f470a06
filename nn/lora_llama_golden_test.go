package nn_test

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/wickml/wick/autograd"
	"github.com/wickml/wick/internal/approx"
	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
)

// The Llama-family LoRA goldens of scripts/gen_golden_lora_llama.py: per
// model of testdata/llama, the Wick-side adapter (r, alpha, targets) that
// the script builds from loraFormula too.
var loraLlamaCases = []struct {
	name    string
	r       int
	alpha   float64
	targets []string
}{
	{"llama_gqa", 3, 7, []string{"k_proj", "o_proj", "up_proj"}},
	{"qwen3", 2, 5, []string{"q_proj", "down_proj", "lm_head"}},
}

// loraFormula is the value of element k of the adapter tensor listed
// index-th (PEFT's names sorted), as scripts/gen_golden_lora_llama.py
// computes it: 0.3·(((37k + 11·index) mod 101) − 50)/50 in float64,
// rounded to float32.
func loraFormula(n, index int) []float32 {
	out := make([]float32, n)
	for k := range out {
		out[k] = float32(0.3 * float64((37*k+11*index)%101-50) / 50)
	}
	return out
}

func loadLlamaBase(t *testing.T, name string) *nn.Llama {
	t.Helper()
	m, err := nn.LoadCausalLM(filepath.Join("..", "testdata", "llama", name))
	if err != nil {
		t.Fatal(err)
	}
	return m.(*nn.Llama)
}

// TestLoRALlamaGoldens checks LoRA on a Llama and a Qwen3 model against the
// PyTorch transcription of PEFT on the transcription of transformers:
//
//   - an adapter the script wrote in PEFT's layout (q_proj, v_proj on the
//     Llama; all seven projections on Qwen3) loads with LoadAdapter and
//     gives the script's logits and loss, and the gradients of every
//     adapter tensor after one backward pass equal PyTorch's;
//   - an adapter built in Wick (the formula's values on other targets,
//     lm_head among them) saved with SaveAdapter and loaded back gives the
//     logits the script computed for the same adapter; what Wick saves is,
//     byte for byte, the committed wick_adapter folder, which the script
//     loads as PEFT would and finds those logits with.
func TestLoRALlamaGoldens(t *testing.T) {
	for _, c := range loraLlamaCases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join("..", "testdata", "lora", c.name)
			g := readLoRAGolden(t, filepath.Join(c.name, "golden.safetensors"))
			idx, targets := get(t, g, "idx"), get(t, g, "targets")

			// PEFT's adapter in Wick
			m := loadLlamaBase(t, c.name)
			l, err := nn.LoadAdapter(filepath.Join(dir, "peft_adapter"), m)
			if err != nil {
				t.Fatal(err)
			}
			l.Train()
			logits, loss := m.ForwardLoss(idx, targets)
			approx.EqualTensor(t, "logits", logits, get(t, g, "logits"), 1e-4, 1e-4)
			approx.EqualTensor(t, "loss", loss, get(t, g, "loss"), 1e-4, 1e-6)
			loss.Backward()
			n := 0
			for _, p := range l.NamedParameters() {
				want := get(t, g, "grad."+nn.AdapterPrefix+p.Name)
				approx.EqualTensor(t, "grad "+p.Name, p.Param.Grad(), want, 1e-4, 1e-5*maxAbs(want))
				n++
			}
			if want := len(g.WithPrefix("grad.")); n != want {
				t.Errorf("%d adapter tensors in Wick, %d in PyTorch's golden", n, want)
			}

			// Wick's adapter in the script
			m = loadLlamaBase(t, c.name)
			base := m.Forward(idx)
			l, err = nn.ApplyLoRA(m, nn.LoRAConfig{R: c.r, Alpha: c.alpha, TargetModules: c.targets, BaseModel: "testdata/llama/" + c.name})
			if err != nil {
				t.Fatal(err)
			}
			ps := l.NamedParameters()
			sort.Slice(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name })
			for i, p := range ps {
				v := tensor.New(loraFormula(p.Param.Numel(), i), p.Param.Shape()...)
				autograd.NoGrad(func() { p.Param.CopyFrom(v) })
			}
			saved := t.TempDir()
			if *updateLoRA {
				saved = filepath.Join(dir, "wick_adapter")
			}
			if err := l.SaveAdapter(saved); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{nn.AdapterConfigFile, nn.AdapterWeightsFile} {
				got, err1 := os.ReadFile(filepath.Join(saved, f))
				want, err2 := os.ReadFile(filepath.Join(dir, "wick_adapter", f))
				if err1 != nil || err2 != nil || !slices.Equal(got, want) {
					t.Errorf("%s differs from the committed wick_adapter (%v, %v); rerun with -update-lora and scripts/gen_golden_lora_llama.py", f, err1, err2)
				}
			}
			m2 := loadLlamaBase(t, c.name)
			if _, err := nn.LoadAdapter(saved, m2); err != nil {
				t.Fatal(err)
			}
			want := get(t, g, "wick.logits")
			got := m2.Forward(idx)
			if approx.Index(base.Float32s(), want.Float32s(), 0, 1e-2) < 0 {
				t.Fatal("the formula's adapter leaves the logits within 1e-2 of the base model's")
			}
			approx.EqualTensor(t, "logits of Wick's saved adapter", got, want, 1e-4, 1e-4)
		})
	}
}
