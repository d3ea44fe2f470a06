package optim_test

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wickml/wick/internal/approx"
	"github.com/wickml/wick/optim"
	"github.com/wickml/wick/tensor"
)

// scheduleCase is one case of testdata/nn/schedules.json, written by
// scripts/gen_golden_schedules.py from torch.optim.lr_scheduler.
type scheduleCase struct {
	Name     string    `json:"name"`
	LR       float64   `json:"lr"`
	Steps    int       `json:"steps"`
	LRs      []float64 `json:"lrs"`
	ResumeAt int       `json:"resume_at"`
	Resumed  []float64 `json:"resumed"`
}

// goldenSchedule builds the schedule the generator script builds in
// PyTorch for the case of this name.
func goldenSchedule(t *testing.T, name string, lr float64) optim.Schedule {
	switch name {
	case "constant":
		return optim.ConstantLR{LR: lr}
	case "linear_warmup":
		return optim.LinearLR{LR: lr, StartFactor: 0.1, EndFactor: 1, Iters: 5}
	case "linear_decay":
		return optim.LinearLR{LR: lr, StartFactor: 1, EndFactor: 0, Iters: 8}
	case "step":
		return optim.StepLR{LR: lr, StepSize: 3, Gamma: 0.5}
	case "cosine":
		return optim.CosineAnnealingLR{LR: lr, MinLR: 0.01, TMax: 10}
	case "lambda":
		return optim.LambdaLR{LR: lr, Lambda: func(s int) float64 { return math.Pow(0.9, float64(s)) }}
	case "nanogpt_cosine":
		return optim.CosineLR{MaxLR: lr, MinLR: 0.01, WarmupIters: 4, DecayIters: 16}
	case "warmup_cosine":
		return optim.SequentialLR{
			Schedules:  []optim.Schedule{optim.LinearLR{LR: lr, StartFactor: 0.01, EndFactor: 1, Iters: 5}, optim.CosineAnnealingLR{LR: lr, MinLR: 1e-4, TMax: 15}},
			Milestones: []int{5},
		}
	case "warmup_constant_step":
		return optim.SequentialLR{
			Schedules: []optim.Schedule{optim.LinearLR{LR: lr, StartFactor: 0.25, EndFactor: 1, Iters: 3}, optim.ConstantLR{LR: lr},
				optim.StepLR{LR: lr, StepSize: 2, Gamma: 0.1}},
			Milestones: []int{3, 6},
		}
	}
	t.Fatalf("golden schedule %q is unknown here", name)
	return nil
}

// TestSchedulesGolden steps each schedule through a Scheduler over SGD and
// compares the optimizer's rate after every step with PyTorch's, then
// resumes from the state saved half-way into a new optimizer and Scheduler
// and compares the rates after the resume.
func TestSchedulesGolden(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "nn", "schedules.json"))
	if err != nil {
		t.Fatal(err)
	}
	var golden struct{ Cases []scheduleCase }
	if err := json.Unmarshal(b, &golden); err != nil {
		t.Fatal(err)
	}
	if len(golden.Cases) == 0 {
		t.Fatal("no cases")
	}
	near := func(got, want float64) bool { return approx.Scalar(got, want, 1e-12, 1e-15) }
	for _, c := range golden.Cases {
		t.Run(c.Name, func(t *testing.T) {
			sch := goldenSchedule(t, c.Name, c.LR)
			newOpt := func() optim.Optimizer {
				return optim.NewSGD([]*tensor.Tensor{tensor.Zeros(1).RequiresGrad()}, optim.SGDConfig{LR: c.LR})
			}
			opt := newOpt()
			s := optim.NewScheduler(opt, sch)
			var saved map[string]*tensor.Tensor
			for k, want := range c.LRs {
				if k > 0 {
					opt.Step()
					s.Step()
				}
				if got := opt.LR(); !near(got, want) || s.LR() != got || s.LastStep() != k || sch.At(k) != got {
					t.Errorf("step %d: lr %.17g (scheduler %.17g at %d), PyTorch %.17g", k, got, s.LR(), s.LastStep(), want)
				}
				if k == c.ResumeAt {
					saved = s.StateDict()
				}
			}
			opt2 := newOpt()
			s2 := optim.NewScheduler(opt2, sch)
			if err := s2.LoadStateDict(saved); err != nil {
				t.Fatal(err)
			}
			for k, want := range c.Resumed {
				if k > 0 {
					opt2.Step()
					s2.Step()
				}
				if got := opt2.LR(); !near(got, want) || s2.LastStep() != c.ResumeAt+k {
					t.Errorf("resumed at %d, step %d: lr %.17g, PyTorch %.17g", c.ResumeAt, c.ResumeAt+k, got, want)
				}
			}
		})
	}
}

// TestScheduleErrors checks the panics of misused schedules and the errors
// of bad scheduler state.
func TestScheduleErrors(t *testing.T) {
	one := optim.ConstantLR{LR: 1}
	for _, c := range []struct {
		name string
		f    func()
		want string
	}{
		{"StepLR of step size 0", func() { optim.StepLR{LR: 1, Gamma: 0.5}.At(3) }, "StepSize is 0"},
		{"LambdaLR without lambda", func() { optim.LambdaLR{LR: 1}.At(0) }, "Lambda is nil"},
		{"negative step", func() { optim.LinearLR{LR: 1, Iters: 3}.At(-1) }, "step -1 is negative"},
		{"SequentialLR without milestones", func() { optim.SequentialLR{Schedules: []optim.Schedule{one, one}}.At(0) }, "2 schedules and 0 milestones"},
		{"SequentialLR of decreasing milestones", func() {
			optim.SequentialLR{Schedules: []optim.Schedule{one, one, one}, Milestones: []int{5, 5}}.At(0)
		}, "milestones [5 5] are not positive and increasing"},
		{"SequentialLR at milestone 0", func() { optim.SequentialLR{Schedules: []optim.Schedule{one, one}, Milestones: []int{0}}.At(0) }, "not positive"},
		{"SequentialLR with a nil schedule", func() { optim.SequentialLR{Schedules: []optim.Schedule{one, nil}, Milestones: []int{2}}.At(2) }, "schedule 1 is nil"},
		{"NewScheduler without schedule", func() { optim.NewScheduler(optim.NewSGD(nil, optim.SGDConfig{LR: 1}), nil) }, "must be non-nil"},
	} {
		err := tensor.Catch(c.f)
		var te *tensor.Error
		if !errors.As(err, &te) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a *tensor.Error containing %q", c.name, err, c.want)
		}
	}

	opt := optim.NewSGD(nil, optim.SGDConfig{LR: 1})
	s := optim.NewScheduler(opt, optim.LinearLR{LR: 1, StartFactor: 0.5, EndFactor: 1, Iters: 4})
	for _, c := range []struct {
		name string
		sd   map[string]*tensor.Tensor
		want string
	}{
		{"empty", map[string]*tensor.Tensor{}, `"last_epoch" is missing`},
		{"float", map[string]*tensor.Tensor{"last_epoch": tensor.Zeros()}, "must be one int64"},
		{"negative", map[string]*tensor.Tensor{"last_epoch": tensor.FromInts([]int{-2}, 1)}, "negative step -2"},
		{"extra", map[string]*tensor.Tensor{"last_epoch": tensor.FromInts([]int{2}, 1), "base_lrs": tensor.Zeros(1)}, `unexpected tensors ["base_lrs"]`},
	} {
		if err := s.LoadStateDict(c.sd); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
		if s.LastStep() != 0 || opt.LR() != 0.5 {
			t.Errorf("%s: the scheduler moved to %d, lr %v", c.name, s.LastStep(), opt.LR())
		}
	}
}
