package optim

import (
	"fmt"
	"math"

	"github.com/wickml/wick/tensor"
)

// Schedule gives the learning rate of each optimizer step, counting from 0:
// the value of PyTorch's lr_scheduler after that many scheduler.step()
// calls. CosineLR, ConstantLR, LinearLR, StepLR, CosineAnnealingLR, LambdaLR
// and SequentialLR are Schedules; a Scheduler applies one to an optimizer
// and saves its position for resuming. A Schedule is a value: the same step
// always gives the same rate, and many goroutines may call At at once.
type Schedule interface {
	At(step int) float64
}

var (
	_ Schedule = CosineLR{}
	_ Schedule = ConstantLR{}
	_ Schedule = LinearLR{}
	_ Schedule = StepLR{}
	_ Schedule = CosineAnnealingLR{}
	_ Schedule = LambdaLR{}
	_ Schedule = SequentialLR{}
)

// CosineLR is nanoGPT's learning-rate schedule (get_lr in train.py): a
// linear warmup over WarmupIters iterations, a cosine decay from MaxLR to
// MinLR until DecayIters, then MinLR. It is cosine with warmup as
// cmd/train runs it; SequentialLR of a LinearLR and a CosineAnnealingLR is
// PyTorch's spelling of the same idea.
type CosineLR struct {
	MaxLR       float64 // nanoGPT: learning_rate
	MinLR       float64 // min_lr
	WarmupIters int     // warmup_iters
	DecayIters  int     // lr_decay_iters
}

// At returns the learning rate for iteration it (counting from 0), exactly
// as nanoGPT computes it:
//
//	it < warmup:  MaxLR·(it+1)/(warmup+1)
//	it > decay:   MinLR
//	otherwise:    MinLR + ½(1+cos(π·(it−warmup)/(decay−warmup)))·(MaxLR−MinLR)
//
// When DecayIters ≤ WarmupIters (where nanoGPT would divide by zero) it
// returns MinLR after the warmup.
func (s CosineLR) At(it int) float64 {
	if it < s.WarmupIters {
		return s.MaxLR * float64(it+1) / float64(s.WarmupIters+1)
	}
	if it > s.DecayIters || s.DecayIters <= s.WarmupIters {
		return s.MinLR
	}
	ratio := float64(it-s.WarmupIters) / float64(s.DecayIters-s.WarmupIters)
	coeff := 0.5 * (1.0 + math.Cos(math.Pi*ratio))
	return s.MinLR + coeff*(s.MaxLR-s.MinLR)
}

// ConstantLR is the rate LR at every step (PyTorch's LambdaLR with
// lambda step: 1; PyTorch's own ConstantLR, a factor for the first steps,
// is LinearLR with equal factors inside a SequentialLR).
type ConstantLR struct {
	LR float64
}

// At returns s.LR.
func (s ConstantLR) At(int) float64 { return s.LR }

// LinearLR is torch.optim.lr_scheduler.LinearLR: the factor of LR moves
// linearly from StartFactor at step 0 to EndFactor at step Iters and stays
// there. A linear warmup is LinearLR{LR: lr, StartFactor: 0.01, EndFactor: 1,
// Iters: warmup}; a linear decay to zero is LinearLR{LR: lr, StartFactor: 1,
// Iters: total}.
type LinearLR struct {
	LR                     float64
	StartFactor, EndFactor float64
	Iters                  int // PyTorch's total_iters
}

// At returns LR·(StartFactor + (EndFactor−StartFactor)·min(step, Iters)/Iters)
// (EndFactor's rate when Iters ≤ 0).
func (s LinearLR) At(step int) float64 {
	checkStep("LinearLR", step)
	if s.Iters <= 0 || step >= s.Iters {
		return s.LR * s.EndFactor
	}
	return s.LR * (s.StartFactor + (s.EndFactor-s.StartFactor)*float64(step)/float64(s.Iters))
}

// StepLR is torch.optim.lr_scheduler.StepLR: LR multiplied by Gamma every
// StepSize steps.
type StepLR struct {
	LR       float64
	StepSize int
	Gamma    float64
}

// At returns LR·Gamma^⌊step/StepSize⌋. It panics if StepSize is not
// positive.
func (s StepLR) At(step int) float64 {
	checkStep("StepLR", step)
	if s.StepSize <= 0 {
		panic(&tensor.Error{Pkg: "optim", Op: "StepLR", Msg: fmt.Sprintf("StepSize is %d, want at least 1", s.StepSize)})
	}
	return s.LR * math.Pow(s.Gamma, float64(step/s.StepSize))
}

// CosineAnnealingLR is torch.optim.lr_scheduler.CosineAnnealingLR over its
// first half-period: a cosine from LR at step 0 to MinLR (eta_min) at step
// TMax (T_max). Past TMax it stays at MinLR, where PyTorch's rises again
// (warm restarts are SequentialLR of several).
type CosineAnnealingLR struct {
	LR, MinLR float64
	TMax      int
}

// At returns MinLR + ½(LR−MinLR)(1+cos(π·min(step, TMax)/TMax)) (MinLR
// when TMax ≤ 0).
func (s CosineAnnealingLR) At(step int) float64 {
	checkStep("CosineAnnealingLR", step)
	if s.TMax <= 0 || step >= s.TMax {
		return s.MinLR
	}
	return s.MinLR + 0.5*(s.LR-s.MinLR)*(1+math.Cos(math.Pi*float64(step)/float64(s.TMax)))
}

// LambdaLR is torch.optim.lr_scheduler.LambdaLR: LR times a factor that
// Lambda computes from the step, for any schedule a formula states:
//
//	optim.LambdaLR{LR: 3e-4, Lambda: func(step int) float64 { return math.Pow(0.95, float64(step)) }}
//
// Lambda must be a pure function of step (a Scheduler that resumes calls it
// for the step it resumes at, never for the steps before).
type LambdaLR struct {
	LR     float64
	Lambda func(step int) float64
}

// At returns LR·Lambda(step). It panics if Lambda is nil.
func (s LambdaLR) At(step int) float64 {
	if s.Lambda == nil {
		panic(&tensor.Error{Pkg: "optim", Op: "LambdaLR", Msg: "Lambda is nil"})
	}
	return s.LR * s.Lambda(step)
}

// SequentialLR is torch.optim.lr_scheduler.SequentialLR: Schedules[0] until
// step Milestones[0], then Schedules[1] counted from 0 at that milestone,
// and so on. Warmup then cosine decay, PyTorch's way:
//
//	optim.SequentialLR{
//		Schedules: []optim.Schedule{
//			optim.LinearLR{LR: 1e-3, StartFactor: 0.01, EndFactor: 1, Iters: 100},
//			optim.CosineAnnealingLR{LR: 1e-3, MinLR: 1e-4, TMax: 1900},
//		},
//		Milestones: []int{100},
//	}
type SequentialLR struct {
	Schedules  []Schedule
	Milestones []int // len(Schedules)−1 increasing steps
}

// At returns the rate of the schedule whose span holds step, at step minus
// the milestone that starts it. It panics if there are not one milestone
// fewer than schedules, if a schedule is nil or if the milestones are not
// positive and increasing.
func (s SequentialLR) At(step int) float64 {
	checkStep("SequentialLR", step)
	if len(s.Schedules) == 0 || len(s.Milestones) != len(s.Schedules)-1 {
		panic(&tensor.Error{Pkg: "optim", Op: "SequentialLR", Msg: fmt.Sprintf("%d schedules and %d milestones, want at least one schedule and one milestone fewer", len(s.Schedules), len(s.Milestones))})
	}
	start, i, prev := 0, 0, 0
	for j, m := range s.Milestones {
		if m <= prev {
			panic(&tensor.Error{Pkg: "optim", Op: "SequentialLR", Msg: fmt.Sprintf("milestones %v are not positive and increasing", s.Milestones)})
		}
		prev = m
		if step >= m {
			start, i = m, j+1
		}
	}
	if s.Schedules[i] == nil {
		panic(&tensor.Error{Pkg: "optim", Op: "SequentialLR", Msg: fmt.Sprintf("schedule %d is nil", i)})
	}
	return s.Schedules[i].At(step - start)
}

// checkStep panics if step is negative.
func checkStep(op string, step int) {
	if step < 0 {
		panic(&tensor.Error{Pkg: "optim", Op: op, Msg: fmt.Sprintf("step %d is negative", step)})
	}
}

// Scheduler applies a Schedule to an optimizer step by step, like a
// torch.optim.lr_scheduler object: NewScheduler sets the rate of step 0,
// and each Step after opt.Step moves to the next step's rate.
//
//	sched := optim.NewScheduler(opt, optim.SequentialLR{...})
//	for range iters {
//		loss.Backward()
//		opt.Step()
//		opt.ZeroGrad()
//		sched.Step()
//	}
//
// StateDict and LoadStateDict save and restore its position (PyTorch's
// last_epoch) for exact resumption, next to the optimizer's state. A
// Scheduler is not safe for use by several goroutines at once.
type Scheduler struct {
	opt      Optimizer
	schedule Schedule
	step     int
}

// NewScheduler returns a Scheduler of schedule over opt at step 0, and sets
// opt's learning rate to schedule.At(0). It panics if opt or schedule is
// nil.
func NewScheduler(opt Optimizer, schedule Schedule) *Scheduler {
	if opt == nil || schedule == nil {
		panic(&tensor.Error{Pkg: "optim", Op: "NewScheduler", Msg: "the optimizer and the schedule must be non-nil"})
	}
	s := &Scheduler{opt: opt, schedule: schedule}
	opt.SetLR(schedule.At(0))
	return s
}

// Step moves to the next step and sets the optimizer's learning rate to
// the schedule's rate there.
func (s *Scheduler) Step() {
	s.step++
	s.opt.SetLR(s.schedule.At(s.step))
}

// LastStep returns the step the optimizer's rate is set for: the number of
// Step calls since step 0 (PyTorch's last_epoch).
func (s *Scheduler) LastStep() int { return s.step }

// LR returns the rate of the current step.
func (s *Scheduler) LR() float64 { return s.schedule.At(s.step) }

// schedulerStepKey is the Scheduler's one state tensor.
const schedulerStepKey = "last_epoch"

// StateDict returns the position, "last_epoch" (an Int64 scalar): with the
// same schedule in code, that is all a resumed run needs.
func (s *Scheduler) StateDict() map[string]*tensor.Tensor {
	return map[string]*tensor.Tensor{schedulerStepKey: tensor.FromInts([]int{s.step}, 1).Reshape()}
}

// LoadStateDict restores the position of StateDict and sets the
// optimizer's learning rate to that step's rate. It returns an error, and
// changes nothing, if sd does not hold exactly a non-negative Int64
// "last_epoch".
func (s *Scheduler) LoadStateDict(sd map[string]*tensor.Tensor) error {
	step, err := stepOf("Scheduler", sd, schedulerStepKey)
	if err != nil {
		return err
	}
	if err := checkKnownKeys("Scheduler", sd, map[string]bool{schedulerStepKey: true}); err != nil {
		return err
	}
	s.step = step
	s.opt.SetLR(s.schedule.At(step))
	return nil
}
