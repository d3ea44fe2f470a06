package optim_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/optim"
	"github.com/wickml/wick/tensor"

	"github.com/wickml/wick/internal/approx"
)

// The goldens come from gen_optim_defaults in scripts/gen_golden_nn.py.

type torchDefaults struct {
	LR          float64 `json:"lr"`
	Beta1       float64 `json:"beta1"`
	Beta2       float64 `json:"beta2"`
	Eps         float64 `json:"eps"`
	WeightDecay float64 `json:"weight_decay"`
}

func loadDefaultsGolden(t *testing.T) (nn.StateDict, map[string]string) {
	t.Helper()
	sd, meta, err := nn.LoadStateDictFile(filepath.Join("..", "testdata", "nn", "optim_defaults.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	return sd, meta
}

func TestDefaultsEqualPyTorch(t *testing.T) {
	_, meta := loadDefaultsGolden(t)
	var want map[string]torchDefaults
	if err := json.Unmarshal([]byte(meta["defaults"]), &want); err != nil {
		t.Fatal(err)
	}
	for kind, cfg := range map[string]optim.AdamWConfig{"AdamW": optim.DefaultAdamW(), "Adam": optim.DefaultAdam()} {
		w, ok := want[kind]
		if !ok {
			t.Fatalf("golden lacks torch.optim.%s's defaults", kind)
		}
		got := torchDefaults{LR: cfg.LR, Beta1: cfg.Beta1, Beta2: cfg.Beta2, Eps: cfg.Eps, WeightDecay: cfg.WeightDecay}
		if got != w {
			t.Errorf("Default%s() = %+v, torch.optim.%s's defaults are %+v", kind, got, kind, w)
		}
	}
}

// TestDefaultAdamWSteps runs AdamW from DefaultAdamW, as given and with
// β1 = 0 and no weight decay (values a literal config cannot express),
// against torch.optim.AdamW's steps.
func TestDefaultAdamWSteps(t *testing.T) {
	sd, meta := loadDefaultsGolden(t)
	var steps int
	fmt.Sscan(meta["steps"], &steps)
	zeroBeta1 := optim.DefaultAdamW()
	zeroBeta1.Beta1, zeroBeta1.WeightDecay = 0, 0
	for name, cfg := range map[string]optim.AdamWConfig{"adamw_defaults": optim.DefaultAdamW(), "adamw_beta1_zero": zeroBeta1} {
		var params []*tensor.Tensor
		for i := 0; ; i++ {
			p, ok := sd[fmt.Sprintf("%s.init.%d", name, i)]
			if !ok {
				break
			}
			params = append(params, p.Clone().RequiresGrad())
		}
		if len(params) == 0 || steps == 0 {
			t.Fatalf("%s: no golden steps", name)
		}
		opt := optim.NewAdamW(params, cfg)
		if got := opt.Config(); got != cfg {
			t.Errorf("%s: Config() = %+v, want %+v", name, got, cfg)
		}
		for k := range steps {
			for i, p := range params {
				p.SetGrad(get(t, sd, fmt.Sprintf("%s.grad.%d.%d", name, k, i)).Clone())
			}
			opt.Step()
			for i, p := range params {
				approx.EqualTensor(t, fmt.Sprintf("%s step %d param %d", name, k, i), p, get(t, sd, fmt.Sprintf("%s.after.%d.%d", name, k, i)), 1e-6, 0)
			}
		}
	}
}

// TestLiteralConfigZeros pins the zero-value rule of configs written as
// literals, which existing programs rely on: zero betas and eps mean
// PyTorch's defaults, a zero weight decay means none. Config returns a
// config that rebuilds the same optimizer.
func TestLiteralConfigZeros(t *testing.T) {
	p := tensor.Zeros(2).RequiresGrad()
	opt := optim.NewAdamW([]*tensor.Tensor{p}, optim.AdamWConfig{LR: 0.1})
	cfg := opt.Config()
	if cfg.Beta1 != 0.9 || cfg.Beta2 != 0.999 || cfg.Eps != 1e-8 || cfg.WeightDecay != 0 || cfg.LR != 0.1 {
		t.Errorf("AdamWConfig{LR: 0.1} resolves to %+v", cfg)
	}
	again := optim.NewAdamW([]*tensor.Tensor{tensor.Zeros(2).RequiresGrad()}, cfg).Config()
	if again != cfg {
		t.Errorf("Config() does not rebuild the optimizer: %+v, then %+v", cfg, again)
	}
	// from DefaultAdamW, zeros are zeros
	d := optim.DefaultAdamW()
	d.Beta1, d.Eps, d.WeightDecay = 0, 0, 0
	got := optim.NewAdamW([]*tensor.Tensor{p}, d).Config()
	if got.Beta1 != 0 || got.Eps != 0 || got.WeightDecay != 0 || got.Beta2 != 0.999 {
		t.Errorf("DefaultAdamW with zeros resolves to %+v", got)
	}
}
