package optim

import "math"

// CosineLR is nanoGPT's learning-rate schedule (get_lr in train.py): a
// linear warmup over WarmupIters iterations, a cosine decay from MaxLR to
// MinLR until DecayIters, then MinLR.
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
