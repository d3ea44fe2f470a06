// Package optim holds optimizers that update nn parameters from their
// gradients, with PyTorch 1.13's exact update rules: SGD (momentum,
// Nesterov, weight decay), Adam and AdamW (bias correction, decoupled weight
// decay; the update runs as one fused kernel per parameter).
//
// Optimizers take parameters or parameter groups (DecayGroups splits them
// like nanoGPT: weight decay only on tensors with two or more dimensions)
// and implement Optimizer: Step, ZeroGrad, SetLR, LR, and StateDict /
// LoadStateDict for exact resumption. A state dict is a map of named
// tensors ("state.3.exp_avg", "state.3.step", …) that nn.WriteStateDict
// and nn.SaveStateDictFile can store next to the model's weights.
//
// ClipGradNorm clips gradients by their joint L2 norm like
// torch.nn.utils.clip_grad_norm_, and CosineLR is nanoGPT's warmup plus
// cosine learning-rate schedule.
//
// A training step:
//
//	opt := optim.NewAdamWGroups(optim.DecayGroups(model.Parameters(), 0.1),
//		optim.AdamWConfig{LR: 1e-3, Beta1: 0.9, Beta2: 0.99})
//	sched := optim.CosineLR{MaxLR: 1e-3, MinLR: 1e-4, WarmupIters: 100, DecayIters: 2000}
//	for it := range 2000 {
//		opt.SetLR(sched.At(it))
//		loss := model.Loss(x, y)
//		loss.Backward()
//		optim.ClipGradNorm(model.Parameters(), 1)
//		opt.Step()
//		opt.ZeroGrad()
//	}
package optim
