package nn_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
)

// TestToSameDevice checks that moving a model to the device it is on
// keeps every parameter, and that a device this build cannot use is an
// error that changes nothing.
func TestToSameDevice(t *testing.T) {
	g := tinyGPT()
	before := g.Parameters()
	if err := nn.To(g, tensor.CPU); err != nil {
		t.Fatal(err)
	}
	for i, p := range g.Parameters() {
		if p != before[i] {
			t.Errorf("parameter %d was replaced by a move to its own device", i)
		}
	}
	if _, err := tensor.BackendFor(tensor.CUDA(0)); err == nil {
		return // a GPU build on a GPU: TestToCUDA covers it
	}
	err := nn.To(g, tensor.CUDA(0))
	if err == nil || !strings.HasPrefix(err.Error(), "nn: To: ") {
		t.Errorf("To(cuda:0) in a build without a usable GPU: %v, want an error", err)
	}
	for i, p := range g.Parameters() {
		if p != before[i] || p.Device() != tensor.CPU {
			t.Errorf("parameter %d changed after a failed move", i)
		}
	}
}

// TestParameterCount checks the count against the parameters' sizes, a
// tied tensor counted once, and the summary's totals.
func TestParameterCount(t *testing.T) {
	g := tinyGPT()
	want := 0
	for _, p := range g.NamedParameters() {
		want += p.Param.Numel()
	}
	if got := nn.ParameterCount(g); got != want || got != nn.NumParams(g) {
		t.Errorf("ParameterCount %d, NumParams %d, want %d", got, nn.NumParams(g), want)
	}
	g.Wpe.Weight.SetRequiresGrad(false) // frozen
	s := nn.Summary(g)
	if !strings.HasPrefix(s, g.String()+"\n") {
		t.Errorf("Summary does not start with the model's String:\n%s", s)
	}
	last := s[strings.LastIndex(s, "\n")+1:]
	if wantLast := fmt.Sprintf("parameters: %s (trainable %s)", group(want), group(want-g.Wpe.Weight.Numel())); last != wantLast {
		t.Errorf("Summary's last line %q, want %q", last, wantLast)
	}
}

// group writes n with thousands separators.
func group(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// A model prints like print(model) in PyTorch, with its parameter counts.
func ExampleSummary() {
	model := nn.Sequential{nn.NewLinear(4, 16, true), nn.ReLU{}, nn.NewLinear(16, 2, true)}
	fmt.Println(nn.Summary(model))
	fmt.Println(nn.ParameterCount(model))
	// Output:
	// Sequential(  # 114 params
	//   (0): Linear(in_features=4, out_features=16, bias=True)  # 80 params
	//   (1): ReLU()
	//   (2): Linear(in_features=16, out_features=2, bias=True)  # 34 params
	// )
	// parameters: 114 (trainable 114)
	// 114
}

// Move a whole model to a device in one call; the optimizer comes after.
func ExampleTo() {
	model := nn.Sequential{nn.NewLinear(4, 16, true), nn.ReLU{}, nn.NewLinear(16, 2, true)}
	if err := nn.To(model, tensor.CPU); err != nil { // or tensor.CUDA(0)
		fmt.Println(err)
		return
	}
	fmt.Println(model.Parameters()[0].Device())
	// Output:
	// cpu
}
