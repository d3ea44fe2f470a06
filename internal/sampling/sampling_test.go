package sampling

import (
	"math"
	"strings"
	"testing"
)

func TestCheckTemperature(t *testing.T) {
	for _, ok := range []float64{0, MinTemperature, 0.8, 1, MaxTemperature} {
		if err := CheckTemperature(ok); err != nil {
			t.Errorf("CheckTemperature(%v) = %v, want nil", ok, err)
		}
	}
	for _, c := range []struct {
		t    float64
		want string
	}{
		{1e-300, "use 0 for greedy"}, {1e-45, "use 0 for greedy"}, {math.SmallestNonzeroFloat64, "below"},
		{MinTemperature / 2, "below"}, {-1, "want 0"}, {math.NaN(), "want 0"}, {math.Inf(1), "want 0"},
		{math.Inf(-1), "want 0"}, {MaxTemperature * 2, "want 0"},
	} {
		if err := CheckTemperature(c.t); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("CheckTemperature(%v) = %v, want an error containing %q", c.t, err, c.want)
		}
	}
}

func TestGreedy(t *testing.T) {
	if temp, k := Greedy(0, 200); temp != 1 || k != 1 {
		t.Errorf("Greedy(0, 200) = %v, %d; want 1, 1", temp, k)
	}
	if temp, k := Greedy(0.5, 7); temp != 0.5 || k != 7 {
		t.Errorf("Greedy(0.5, 7) = %v, %d; want 0.5, 7", temp, k)
	}
}
