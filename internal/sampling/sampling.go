// Package sampling holds the checks of sampling parameters shared by the
// commands that generate text (train sample, the server), so that a
// request the server accepts and a flag train accepts always produce text.
package sampling

import (
	"fmt"
	"math"
)

// Bounds of a sampling temperature. Generation divides float32 logits by
// the temperature: below MinTemperature the quotients of ordinary logits
// reach float32's range (1e-300 rounds to 0, 1e-45 gives Inf and NaN
// probabilities), and the limit of the distribution is the greedy choice
// anyway, which temperature 0 asks for. Above MaxTemperature the
// distribution is uniform to float32 precision.
const (
	MinTemperature = 1e-3
	MaxTemperature = 100
)

// CheckTemperature returns an error, phrased to follow the parameter's
// name, unless t is 0 (greedy: the most likely token) or a number from
// MinTemperature to MaxTemperature.
func CheckTemperature(t float64) error {
	switch {
	case t == 0:
		return nil
	case math.IsNaN(t) || math.IsInf(t, 0) || t < 0 || t > MaxTemperature:
		return fmt.Errorf("=%v: want 0 (greedy) or a number from %g to %g", t, float64(MinTemperature), float64(MaxTemperature))
	case t < MinTemperature:
		return fmt.Errorf("=%v is below the smallest temperature, %g: use 0 for greedy sampling", t, float64(MinTemperature))
	}
	return nil
}

// Greedy returns the temperature and top-k that sample as temperature t
// and topK ask: temperature 0 (greedy) becomes top-k 1 at temperature 1,
// which always draws the most likely token (ties with it aside).
func Greedy(t float64, topK int) (float32, int) {
	if t == 0 {
		return 1, 1
	}
	return float32(t), topK
}
