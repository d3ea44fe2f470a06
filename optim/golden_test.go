package optim_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/optim"
	"github.com/wickml/wick/tensor"

	"github.com/wickml/wick/internal/approx"
)

// The goldens come from scripts/gen_golden_nn.py (torch.optim of PyTorch
// 1.13).

type optCase struct {
	Name        string  `json:"name"`
	Kind        string  `json:"kind"`
	LR          float64 `json:"lr"`
	Momentum    float64 `json:"momentum"`
	Nesterov    bool    `json:"nesterov"`
	Beta1       float64 `json:"beta1"`
	Beta2       float64 `json:"beta2"`
	Eps         float64 `json:"eps"`
	WeightDecay float64 `json:"weight_decay"`
	Groups      bool    `json:"groups"`
}

func loadGolden(t *testing.T) (nn.StateDict, map[string]string) {
	t.Helper()
	sd, meta, err := nn.LoadStateDictFile(filepath.Join("..", "testdata", "nn", "optim.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	return sd, meta
}

func get(t *testing.T, sd nn.StateDict, name string) *tensor.Tensor {
	t.Helper()
	v, ok := sd[name]
	if !ok {
		t.Fatalf("golden tensor %q missing", name)
	}
	return v
}

func newOptimizer(c optCase, params []*tensor.Tensor) optim.Optimizer {
	groups := []optim.ParamGroup{{Params: params, WeightDecay: c.WeightDecay}}
	if c.Groups {
		groups = optim.DecayGroups(params, c.WeightDecay)
	}
	switch c.Kind {
	case "sgd":
		return optim.NewSGDGroups(groups, optim.SGDConfig{LR: c.LR, Momentum: c.Momentum, Nesterov: c.Nesterov})
	case "adam":
		return optim.NewAdamGroups(groups, optim.AdamConfig{LR: c.LR, Beta1: c.Beta1, Beta2: c.Beta2, Eps: c.Eps})
	case "adamw":
		return optim.NewAdamWGroups(groups, optim.AdamWConfig{LR: c.LR, Beta1: c.Beta1, Beta2: c.Beta2, Eps: c.Eps})
	}
	panic("unknown optimizer " + c.Kind)
}

func TestOptimizerGoldens(t *testing.T) {
	sd, meta := loadGolden(t)
	var cases []optCase
	if err := json.Unmarshal([]byte(meta["cases"]), &cases); err != nil {
		t.Fatal(err)
	}
	steps, _ := strconv.Atoi(meta["steps"])
	if len(cases) < 7 || steps < 3 {
		t.Fatalf("golden file has %d cases of %d steps", len(cases), steps)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			var params []*tensor.Tensor
			for i := 0; ; i++ {
				p, ok := sd[fmt.Sprintf("%s.init.%d", c.Name, i)]
				if !ok {
					break
				}
				params = append(params, p.Clone().RequiresGrad())
			}
			opt := newOptimizer(c, params)
			for k := range steps {
				if k == 3 {
					opt.SetLR(c.LR * 0.5)
				}
				for i, p := range params {
					p.SetGrad(get(t, sd, fmt.Sprintf("%s.grad.%d.%d", c.Name, k, i)).Clone())
				}
				opt.Step()
				for i, p := range params {
					approx.EqualTensor(t, fmt.Sprintf("step %d param %d", k, i), p, get(t, sd, fmt.Sprintf("%s.after.%d.%d", c.Name, k, i)), 1e-6, 0)
				}
			}
		})
	}
}

func TestClipGradNormGolden(t *testing.T) {
	sd, _ := loadGolden(t)
	var params []*tensor.Tensor
	for i := 0; ; i++ {
		g, ok := sd[fmt.Sprintf("clip.grad.%d", i)]
		if !ok {
			break
		}
		p := tensor.ZerosLike(g).RequiresGrad()
		p.SetGrad(g.Clone())
		params = append(params, p)
	}
	norm := optim.ClipGradNorm(params, 1.0)
	want := get(t, sd, "clip.norm").Item()
	if !approx.Scalar(float64(norm), float64(want), 1e-6, 0) {
		t.Errorf("norm = %v, want %v", norm, want)
	}
	for i, p := range params {
		approx.EqualTensor(t, fmt.Sprintf("clipped grad %d", i), p.Grad(), get(t, sd, fmt.Sprintf("clip.clipped.%d", i)), 1e-6, 0)
	}
}

func TestCosineLRGolden(t *testing.T) {
	_, meta := loadGolden(t)
	var scheds []struct {
		MaxLR  float64   `json:"max_lr"`
		MinLR  float64   `json:"min_lr"`
		Warmup int       `json:"warmup"`
		Decay  int       `json:"decay"`
		Its    []int     `json:"its"`
		LRs    []float64 `json:"lrs"`
	}
	if err := json.Unmarshal([]byte(meta["cosine"]), &scheds); err != nil {
		t.Fatal(err)
	}
	if len(scheds) == 0 {
		t.Fatal("no schedules in the golden file")
	}
	for _, s := range scheds {
		sch := optim.CosineLR{MaxLR: s.MaxLR, MinLR: s.MinLR, WarmupIters: s.Warmup, DecayIters: s.Decay}
		for j, it := range s.Its {
			if got := sch.At(it); !approx.Scalar(got, s.LRs[j], 1e-15, 1e-15) {
				t.Errorf("%+v.At(%d) = %.17g, want %.17g", sch, it, got, s.LRs[j])
			}
		}
	}
}
