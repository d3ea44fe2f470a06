package tensor_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/wickml/wick/tensor"
)

// TestSortGatherScanBadInput checks that Linspace, Sort, TopK, Gather,
// Scatter, ScatterAdd, Cumsum and Cumprod panic with an *Error naming the
// op and the shapes on arguments that cannot be right.
func TestSortGatherScanBadInput(t *testing.T) {
	idx := func(v []int, shape ...int) *tensor.Tensor { return tensor.FromInts(v, shape...) }
	cases := []struct {
		name string
		op   string
		want []string
		f    func()
	}{
		{"Linspace negative steps", "Linspace", []string{"-1"}, func() { tensor.Linspace(0, 1, -1) }},
		{"Sort dim", "Sort", []string{"dimension 2", "[2 3]"}, func() { tensor.Zeros(2, 3).Sort(2, false) }},
		{"Sort int64", "Sort", []string{"int64", "[3]"}, func() { idx([]int{3, 1, 2}).Sort(0, false) }},
		{"TopK k too large", "TopK", []string{"k 4", "size 3", "[2 3]"}, func() { tensor.Zeros(2, 3).TopK(4, 1, true, true) }},
		{"TopK negative k", "TopK", []string{"k -1"}, func() { tensor.Zeros(2, 3).TopK(-1, 1, true, true) }},
		{"TopK dim", "TopK", []string{"dimension -3", "[2 3]"}, func() { tensor.Zeros(2, 3).TopK(1, -3, true, true) }},
		{"Gather index out of bounds", "Gather", []string{"index 3", "size 3", "[2 3]", "[2 1]"},
			func() { tensor.Zeros(2, 3).Gather(1, idx([]int{0, 3}, 2, 1)) }},
		{"Gather negative index", "Gather", []string{"index -1", "[2 3]"},
			func() { tensor.Zeros(2, 3).Gather(1, idx([]int{0, -1}, 2, 1)) }},
		{"Gather float index", "Gather", []string{"int64", "float32[2 1]"},
			func() { tensor.Zeros(2, 3).Gather(1, tensor.Zeros(2, 1)) }},
		{"Gather index dims", "Gather", []string{"[2]", "[2 3]", "dims"},
			func() { tensor.Zeros(2, 3).Gather(1, idx([]int{0, 1}, 2)) }},
		{"Gather index larger", "Gather", []string{"[3 1]", "[2 3]", "dimension 0"},
			func() { tensor.Zeros(2, 3).Gather(1, idx([]int{0, 1, 2}, 3, 1)) }},
		{"Gather dim", "Gather", []string{"dimension 2", "[2 3]"},
			func() { tensor.Zeros(2, 3).Gather(2, idx([]int{0, 1}, 2, 1)) }},
		{"ScatterAdd index larger than src", "ScatterAdd", []string{"[2 2]", "src [2 1]"},
			func() { tensor.Zeros(2, 3).ScatterAdd(1, idx([]int{0, 1, 1, 0}, 2, 2), tensor.Zeros(2, 1)) }},
		{"ScatterAdd out of bounds", "ScatterAdd", []string{"index 2", "size 2", "[2 3]"},
			func() { tensor.Zeros(2, 3).ScatterAdd(0, idx([]int{2}, 1, 1), tensor.Zeros(1, 1)) }},
		{"Scatter src dims", "Scatter", []string{"src [4]", "[2 3]"},
			func() { tensor.Zeros(2, 3).Scatter(0, idx([]int{0}, 1, 1), tensor.Zeros(4)) }},
		{"Scatter int64 src", "Scatter", []string{"int64"},
			func() { tensor.Zeros(2, 3).Scatter(0, idx([]int{0}, 1, 1), idx([]int{0}, 1, 1)) }},
		{"Cumsum dim", "Cumsum", []string{"dimension 1", "[4]"}, func() { tensor.Zeros(4).Cumsum(1) }},
		{"Cumprod dim", "Cumprod", []string{"dimension -2", "[4]"}, func() { tensor.Zeros(4).Cumprod(-2) }},
		{"Cumsum int64", "Cumsum", []string{"int64"}, func() { idx([]int{1, 2}).Cumsum(0) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := tensor.Catch(c.f)
			var te *tensor.Error
			if !errors.As(err, &te) {
				t.Fatalf("got %v, want a *tensor.Error", err)
			}
			if te.Op != c.op {
				t.Errorf("Op = %q, want %q (%v)", te.Op, c.op, err)
			}
			for _, w := range c.want {
				if !strings.Contains(te.Msg, w) {
					t.Errorf("message %q does not contain %q", te.Msg, w)
				}
			}
		})
	}
}

// TestLinspaceBits checks Linspace's values bit for bit against the
// golden cases short enough for PyTorch's CPU kernel to use its scalar
// formula (fewer than 16 steps; longer ones it computes through vector
// lanes, checked within tolerance by TestGolden).
func TestLinspaceBits(t *testing.T) {
	n := 0
	for _, c := range loadGolden(t) {
		if c.Op != "Linspace" || goldenNumel(c.Outputs[0].Shape) >= 16 {
			continue
		}
		a := goldenArgs{t, c.Args}
		got := tensor.Linspace(a.floatArg("start"), a.floatArg("end"), a.int("steps")).Float32s()
		want := c.Outputs[0].Data.floats(t)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Errorf("%s: element %d = %v (%#x), PyTorch %v (%#x)", c.Name, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
			}
		}
		n++
	}
	if n < 5 {
		t.Fatalf("only %d short Linspace golden cases", n)
	}
}

// TestLinspaceEnds checks the two ends and the middle of long ranges: the
// ends are exact (each is computed from its own end), and the middle is
// within one step's rounding of the exact value.
func TestLinspaceEnds(t *testing.T) {
	for _, c := range []struct {
		start, end float32
		steps      int
	}{{0, 1, 1001}, {-3.3, 7.7, 100}, {1e-3, 1e3, 4097}, {5, -2, 2}} {
		v := tensor.Linspace(c.start, c.end, c.steps).Float32s()
		if v[0] != c.start || v[len(v)-1] != c.end {
			t.Errorf("Linspace(%v, %v, %d): ends %v and %v", c.start, c.end, c.steps, v[0], v[len(v)-1])
		}
		for i, x := range v {
			exact := float64(c.start) + (float64(c.end)-float64(c.start))*float64(i)/float64(c.steps-1)
			if d := math.Abs(float64(x) - exact); d > 4e-7*math.Max(math.Abs(float64(c.start)), math.Abs(float64(c.end))) {
				t.Fatalf("Linspace(%v, %v, %d)[%d] = %v, exact %v", c.start, c.end, c.steps, i, x, exact)
			}
		}
	}
}

// TestCumprodGradZeros checks Cumprod's gradient against finite
// differences on lines with no zero, one zero and two zeros, along a
// non-last dim of a non-contiguous input.
func TestCumprodGradZeros(t *testing.T) {
	data := []float32{
		1.5, 0.5, -2, 0.25, 3,
		0, 2, 0.5, -1, 1.5,
		1.5, 2, 0, -1, 0.5,
		2, 0, 0.5, 0, 1.5,
		0.5, 2, -1, 1.5, 0,
	}
	for _, dim := range []int{1, 0} {
		x := tensor.New(data, 5, 5)
		if dim == 0 {
			x = x.T()
		}
		// central differences step across the zeros: the product is
		// linear in each element, so they are exact up to rounding
		err := tensor.GradCheck(func(in []*tensor.Tensor) *tensor.Tensor { return in[0].Cumprod(dim) },
			[]*tensor.Tensor{x}, tensor.GradCheckOptions{})
		if err != nil {
			t.Errorf("dim %d: %v", dim, err)
		}
	}
}

// TestSortTopKGatherGrad checks the gradients of Sort, TopK, Gather,
// Scatter, ScatterAdd and Cumsum against finite differences on random
// non-contiguous inputs with distinct values.
func TestSortTopKGatherGrad(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 7))
	x := tensor.New(distinct(r, 24), 4, 6).T() // [6 4], transposed
	src := tensor.New(distinct(r, 12), 3, 4)
	index := tensor.FromInts([]int{0, 5, 2, 2, 1, 1, 4, 0, 3, 3, 0, 5}, 3, 4)
	fs := map[string]func([]*tensor.Tensor) *tensor.Tensor{
		"Sort":    func(in []*tensor.Tensor) *tensor.Tensor { v, _ := in[0].Sort(0, true); return v },
		"TopK":    func(in []*tensor.Tensor) *tensor.Tensor { v, _ := in[0].TopK(2, -1, false, true); return v },
		"Gather":  func(in []*tensor.Tensor) *tensor.Tensor { return in[0].Gather(0, index) },
		"Cumsum":  func(in []*tensor.Tensor) *tensor.Tensor { return in[0].Cumsum(0) },
		"Cumprod": func(in []*tensor.Tensor) *tensor.Tensor { return in[0].Cumprod(-1) },
		"Scatter": func(in []*tensor.Tensor) *tensor.Tensor { return in[0].Scatter(0, index, in[1]) },
		"ScatterAdd": func(in []*tensor.Tensor) *tensor.Tensor {
			return in[0].ScatterAdd(0, index, in[1])
		},
	}
	for name, f := range fs {
		in := []*tensor.Tensor{x}
		if strings.HasPrefix(name, "Scatter") {
			in = append(in, src)
		}
		if err := tensor.GradCheck(f, in, tensor.GradCheckOptions{}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// distinct returns n values in (-2, 2) at least 0.05 apart, shuffled, so
// that finite differences of Eps 1e-2 never reorder them.
func distinct(r *rand.Rand, n int) []float32 {
	out := make([]float32, n)
	for i, p := range r.Perm(n) {
		out[i] = -2 + 4*(float32(p)+0.5)/float32(n)
	}
	return out
}

// TestSortProperties sorts long random rows with many ties against a
// reference (a stable sort of positions) in both directions and along a
// non-last dim, and checks that TopK is the sort's first k.
func TestSortProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 8))
	rows, cols := 3, 700
	data := make([]float32, rows*cols)
	for i := range data {
		data[i] = float32(r.IntN(50)) / 4 // ties
		if r.IntN(40) == 0 {
			data[i] = float32(math.NaN())
		}
	}
	x := tensor.New(data, rows, cols)
	for _, desc := range []bool{false, true} {
		v, ix := x.T().Sort(0, desc) // [cols rows]
		gv, gi := v.T().Float32s(), ix.T().Ints()
		for row := range rows {
			line := data[row*cols : (row+1)*cols]
			pos := make([]int, cols)
			for i := range pos {
				pos[i] = i
			}
			slices.SortStableFunc(pos, func(a, b int) int {
				c := refOrder(line[a], line[b])
				if desc {
					c = -c
				}
				return c
			})
			for k, p := range pos {
				got := gi[row*cols+k]
				if got != p || math.Float32bits(gv[row*cols+k]) != math.Float32bits(line[p]) {
					t.Fatalf("descending=%v row %d place %d: got index %d value %v, want %d (%v)", desc, row, k, got, gv[row*cols+k], p, line[p])
				}
			}
		}
		tv, ti := x.TopK(37, 1, desc, true)
		sv, si := x.Sort(1, desc)
		if !slices.Equal(ti.Ints(), si.Narrow(1, 0, 37).Contiguous().Ints()) ||
			!bitsEqual(tv.Float32s(), sv.Narrow(1, 0, 37).Contiguous().Float32s()) {
			t.Fatalf("largest=%v: TopK is not the first 37 of Sort", desc)
		}
	}
}

func refOrder(a, b float32) int {
	an, bn := a != a, b != b
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func bitsEqual(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}
