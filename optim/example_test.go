package optim_test

import (
	"fmt"

	"github.com/wickml/wick/optim"
	"github.com/wickml/wick/tensor"
)

// Minimise (w − 3)² with SGD and momentum.
func ExampleSGD() {
	w := tensor.Zeros(1).RequiresGrad()
	opt := optim.NewSGD([]*tensor.Tensor{w}, optim.SGDConfig{LR: 0.1, Momentum: 0.5})
	for range 100 {
		loss := w.SubScalar(3).Square().Sum()
		loss.Backward()
		opt.Step()
		opt.ZeroGrad()
	}
	fmt.Printf("w = %.3f\n", w.Item())
	// Output:
	// w = 3.000
}

// nanoGPT's set-up: AdamW with weight decay on the ≥2-D weights only,
// gradient clipping, and warmup followed by cosine decay.
func ExampleAdamW() {
	tensor.ManualSeed(1)
	w := tensor.Randn(4, 4).RequiresGrad() // decayed
	b := tensor.Zeros(4).RequiresGrad()    // not decayed
	params := []*tensor.Tensor{w, b}
	opt := optim.NewAdamWGroups(optim.DecayGroups(params, 0.1),
		optim.AdamWConfig{LR: 1e-3, Beta1: 0.9, Beta2: 0.99})
	sched := optim.CosineLR{MaxLR: 1e-3, MinLR: 1e-4, WarmupIters: 10, DecayIters: 100}
	x := tensor.Ones(8, 4)
	for it := range 100 {
		opt.SetLR(sched.At(it))
		loss := x.MatMul(w).Add(b).Square().Mean()
		loss.Backward()
		optim.ClipGradNorm(params, 1.0)
		opt.Step()
		opt.ZeroGrad()
	}
	fmt.Printf("lr at 0, 10, 100: %.1e %.1e %.1e\n", sched.At(0), sched.At(10), sched.At(100))
	fmt.Println("bias moved:", b.Abs().Sum().Item() > 0)
	// Output:
	// lr at 0, 10, 100: 9.1e-05 1.0e-03 1.0e-04
	// bias moved: true
}

// ClipGradNorm rescales the gradients so that their joint norm is at most
// the limit, and returns the norm before clipping.
func ExampleClipGradNorm() {
	p := tensor.Zeros(2).RequiresGrad()
	p.SetGrad(tensor.New([]float32{3, 4}))
	norm := optim.ClipGradNorm([]*tensor.Tensor{p}, 1)
	fmt.Printf("norm %.1f, clipped %.3f\n", norm, p.Grad().Float32s())
	// Output:
	// norm 5.0, clipped [0.600 0.800]
}

// A linear warmup then a cosine decay, composed like PyTorch's
// SequentialLR, applied step by step and saved for resuming.
func ExampleScheduler() {
	w := tensor.Zeros(2).RequiresGrad()
	opt := optim.NewAdamW([]*tensor.Tensor{w}, optim.AdamWConfig{LR: 1e-3})
	schedule := optim.SequentialLR{
		Schedules: []optim.Schedule{
			optim.LinearLR{LR: 1e-3, StartFactor: 0.25, EndFactor: 1, Iters: 3},
			optim.CosineAnnealingLR{LR: 1e-3, MinLR: 1e-4, TMax: 4},
		},
		Milestones: []int{3},
	}
	sched := optim.NewScheduler(opt, schedule)
	for step := range 8 {
		fmt.Printf("step %d: lr %.6f\n", step, opt.LR())
		w.Mul(w).Sum().Backward()
		opt.Step()
		opt.ZeroGrad()
		sched.Step()
	}
	state := sched.StateDict() // saved next to the optimizer's StateDict
	resumed := optim.NewScheduler(opt, schedule)
	if err := resumed.LoadStateDict(state); err != nil {
		fmt.Println(err)
	}
	fmt.Printf("resumed at step %d: lr %.6f\n", resumed.LastStep(), opt.LR())
	// Output:
	// step 0: lr 0.000250
	// step 1: lr 0.000500
	// step 2: lr 0.000750
	// step 3: lr 0.001000
	// step 4: lr 0.000868
	// step 5: lr 0.000550
	// step 6: lr 0.000232
	// step 7: lr 0.000100
	// resumed at step 8: lr 0.000100
}
