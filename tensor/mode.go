package tensor

import "github.com/wickml/wick/autograd"

func withoutGrad(f func()) { autograd.NoGrad(f) }
