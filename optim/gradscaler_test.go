package optim_test

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/wickml/wick/optim"
	"github.com/wickml/wick/tensor"
)

// scalerCase is one case of testdata/autocast/gradscaler.json, written by
// scripts/gen_golden_autocast_gradscaler.py from torch.cuda.amp.GradScaler's
// rules.
type scalerCase struct {
	Name           string
	Steps          int
	Bad            map[string]string
	InitScale      float32 `json:"init_scale"`
	GrowthFactor   float32 `json:"growth_factor"`
	BackoffFactor  float32 `json:"backoff_factor"`
	GrowthInterval int     `json:"growth_interval"`
	Changes        [][2]float64
	Skipped        []int
	FinalScale     float32   `json:"final_scale"`
	FinalTracker   int       `json:"final_tracker"`
	FinalParam     []float32 `json:"final_param"`
}

// TestGradScalerGolden replays the scripted overflows of each case: the
// steps where the scale changes and its new values, the skipped steps, the
// final scale, growth tracker and parameter equal PyTorch's.
func TestGradScalerGolden(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "autocast", "gradscaler.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []scalerCase
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) != 4 {
		t.Fatalf("%d cases, want 4", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			p := tensor.New([]float32{0.5, -1.0, 2.0}).RequiresGrad()
			params := []*tensor.Tensor{p}
			opt := optim.NewSGD(params, optim.SGDConfig{LR: 0.1})
			s := optim.NewGradScaler(optim.GradScalerConfig{InitScale: c.InitScale, GrowthFactor: c.GrowthFactor, BackoffFactor: c.BackoffFactor, GrowthInterval: c.GrowthInterval})
			g0 := []float32{0.3, -1.7, 0.9}
			var changes [][2]float64
			var skipped []int
			for i := range c.Steps {
				// the gradient of the scaled loss, as the script makes it
				g := make([]float32, 3)
				for j, v := range g0 {
					g[j] = v * float32(i+1) / 7 * s.Scale()
				}
				switch c.Bad[strconv.Itoa(i)] {
				case "inf":
					g[i%3] = float32(math.Inf(1))
				case "-inf":
					g[i%3] = float32(math.Inf(-1))
				case "nan":
					g[i%3] = float32(math.NaN())
				}
				p.SetGrad(tensor.New(g))
				s.Unscale(params)
				optim.ClipGradNorm(params, 1)
				if !s.Step(opt, params) {
					skipped = append(skipped, i)
				}
				before := s.Scale()
				s.Update()
				if s.Scale() != before {
					changes = append(changes, [2]float64{float64(i), float64(s.Scale())})
				}
				opt.ZeroGrad()
			}
			if !slices.Equal(changes, c.Changes) {
				t.Errorf("scale changes (step, new scale) %v, PyTorch's %v", changes, c.Changes)
			}
			if !slices.Equal(skipped, c.Skipped) {
				t.Errorf("skipped steps %v, PyTorch's %v", skipped, c.Skipped)
			}
			if s.Scale() != c.FinalScale || s.GrowthTracker() != c.FinalTracker {
				t.Errorf("final scale %v, tracker %d; PyTorch's %v, %d", s.Scale(), s.GrowthTracker(), c.FinalScale, c.FinalTracker)
			}
			got := p.Float32s()
			for j, want := range c.FinalParam {
				if math.Abs(float64(got[j]-want)) > 1e-5*max(1, math.Abs(float64(want))) {
					t.Errorf("final parameter %v, PyTorch's %v", got, c.FinalParam)
					break
				}
			}
		})
	}
}

// TestGradScalerUse: ScaleLoss multiplies the loss, Step without Unscale
// unscales, the gradients reach the optimizer divided by the scale, the
// misuses PyTorch raises on panic with a *tensor.Error, and bad settings
// too.
func TestGradScalerUse(t *testing.T) {
	w := tensor.New([]float32{1, 2}).RequiresGrad()
	s := optim.NewGradScaler(optim.GradScalerConfig{})
	if s.Scale() != 65536 {
		t.Fatalf("default scale %v, want 65536", s.Scale())
	}
	loss := w.Mul(w).Sum() // gradient 2w
	s.ScaleLoss(loss).Backward()
	if got := w.Grad().Float32s(); got[0] != 2*65536 || got[1] != 4*65536 {
		t.Fatalf("scaled gradient %v, want 2w·65536", got)
	}
	opt := optim.NewSGD([]*tensor.Tensor{w}, optim.SGDConfig{LR: 0.5})
	if !s.Step(opt, []*tensor.Tensor{w}) {
		t.Fatal("a finite step was skipped")
	}
	if got := w.Float32s(); got[0] != 0 || got[1] != 0 { // w − 0.5·2w
		t.Errorf("after the step w = %v, want [0 0]", got)
	}
	var e *tensor.Error
	for _, c := range []struct {
		name string
		f    func()
	}{
		{"Step twice", func() { s.Step(opt, nil) }},
		{"Unscale after Step", func() { s.Unscale(nil) }},
		{"Update before Unscale", func() { s.Update(); s.Update() }},
		{"Unscale twice", func() { s.Unscale(nil); s.Unscale(nil) }},
		{"growth factor 1", func() { optim.NewGradScaler(optim.GradScalerConfig{GrowthFactor: 1}) }},
		{"infinite scale", func() { optim.NewGradScaler(optim.GradScalerConfig{InitScale: float32(math.Inf(1))}) }},
	} {
		if err := tensor.Catch(c.f); !errors.As(err, &e) || e.Pkg != "optim" {
			t.Errorf("%s: %v, want an optim *tensor.Error", c.name, err)
		}
	}
}
