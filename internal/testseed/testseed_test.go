package testseed

import "testing"

func TestValue(t *testing.T) {
	t.Setenv(EnvVar, "")
	if got := Value(7); got != 7 {
		t.Errorf("unset: %d, want the fixed 7", got)
	}
	t.Setenv(EnvVar, "12345")
	if got := Seed(t, 7); got != 12345 {
		t.Errorf("12345: %d", got)
	}
	t.Setenv(EnvVar, "random")
	if a, b := Value(7), Value(8); a != b {
		t.Errorf("random: %d and %d, want one seed per process", a, b)
	}
	t.Setenv(EnvVar, "sometimes")
	defer func() {
		if recover() == nil {
			t.Error("a bad value did not panic")
		}
	}()
	Value(7)
}
