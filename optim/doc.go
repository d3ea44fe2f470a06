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
// DefaultAdamW and DefaultAdam return torch.optim's defaults (lr 1e-3,
// betas (0.9, 0.999), eps 1e-8, weight decay 0.01 for AdamW and 0 for Adam)
// as a config whose fields are used as they read, so every PyTorch value,
// β1 = 0 included, can be set on it:
//
//	cfg := optim.DefaultAdamW()
//	cfg.Beta1 = 0
//	opt := optim.NewAdamW(model.Parameters(), cfg)
//
// A literal AdamWConfig{...} keeps its zero-value rule (a zero beta or eps
// means PyTorch's default, a zero weight decay none); see AdamWConfig.
//
// ClipGradNorm clips gradients by their joint L2 norm like
// torch.nn.utils.clip_grad_norm_.
//
// GradScaler is dynamic loss scaling for float16 training with
// torch.cuda.amp.GradScaler's rules (scale 2¹⁶ at first, halved after a
// step with inf/NaN gradients, which is skipped, doubled after 2000 clean
// steps; unscale before clipping), as cmd/train's --dtype=float16
// --device=cuda uses it (tensor.Autocast(tensor.Float16, …) around the
// forward pass).
//
// Learning-rate schedules are Schedules, values whose At(step) gives the
// rate of a step as torch.optim.lr_scheduler does: ConstantLR, LinearLR
// (linear warmup or decay), StepLR, CosineAnnealingLR, LambdaLR (any
// formula) and SequentialLR (one schedule after another at milestones,
// which composes warmup with any decay), and CosineLR, nanoGPT's warmup
// plus cosine schedule that cmd/train uses. A Scheduler applies one to an
// optimizer step by step and saves its position (StateDict, LoadStateDict)
// so that a resumed run continues at the same rates.
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
