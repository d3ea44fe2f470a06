package cuda

import (
	"math/rand/v2"
	"testing"

	"github.com/wickml/wick/tensor"
)

// These tests cover the host-side planning of the GPU launches; they need
// no GPU and run in every build.

// kernelOffset computes what wick_offset (csrc/common.cuh) computes for
// element i of operand j from packed layout parameters.
func kernelOffset(p []int64, j int, i int64) int64 {
	nd := int(p[0])
	shape := p[1 : 1+maxD]
	st := p[1+maxD*(1+j) : 1+maxD*(2+j)]
	var off int64
	for d := maxD - 1; d >= 0; d-- {
		if d >= maxD-nd {
			c := i % shape[d]
			i /= shape[d]
			off += c * st[d]
		}
	}
	return off
}

// directOffset is the offset of row-major element i of shape under strides.
func directOffset(shape, strides []int, i int) int {
	off := 0
	for d := len(shape) - 1; d >= 0; d-- {
		off += (i % shape[d]) * strides[d]
		i /= shape[d]
	}
	return off
}

// TestLaunchPlan checks that splitting a view into launches (forChunks)
// and packing each launch's layout (packLayout) address every element the
// way a direct computation does, for random shapes of up to 9 dims with
// permuted, padded and broadcast (stride 0) strides.
func TestLaunchPlan(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	split := 0
	for trial := range 300 {
		nd := 1 + r.IntN(9)
		shape := make([]int, nd)
		for i := range shape {
			shape[i] = 1 + r.IntN(4)
		}
		strides := [][]int{tensor.ContiguousStrides(shape), make([]int, nd), make([]int, nd)}
		for j := 1; j < 3; j++ {
			for d := range nd {
				switch r.IntN(3) {
				case 0:
					strides[j][d] = 0
				default:
					strides[j][d] = r.IntN(50)
				}
			}
		}
		if trial%3 == 0 { // reversed memory order: nothing merges
			s := 1
			for d := range nd {
				strides[1][d] = s
				s *= shape[d]
			}
		}
		n := numel(shape)
		pos, launches := 0, 0
		forChunks(shape, strides, func(offs, cs []int, cst [][]int) {
			if len(cs) > maxD {
				t.Fatalf("launch with %d dims", len(cs))
			}
			p := packLayout(cs, cst...)
			m := numel(cs)
			for i := range m {
				g := pos + i
				for j := range strides {
					got := offs[j] + int(kernelOffset(p, j, int64(i)))
					if want := directOffset(shape, strides[j], g); got != want {
						t.Fatalf("shape %v strides %v: element %d operand %d at %d, want %d", shape, strides, g, j, got, want)
					}
				}
				// the destination (contiguous) is written at offs[0]+i
				if offs[0]+i != g {
					t.Fatalf("shape %v: element %d written at %d", shape, g, offs[0]+i)
				}
			}
			pos += m
			launches++
		})
		if launches > 1 {
			split++
		}
		if pos != n {
			t.Fatalf("shape %v: launches covered %d of %d elements", shape, pos, n)
		}
	}
	if split == 0 {
		t.Error("no view needed several launches: the test does not cover splitting")
	}
	t.Logf("%d of 300 views were split into several launches", split)
}

func TestCollapse(t *testing.T) {
	shape, st := tensor.Collapse([]int{2, 3, 4}, []int{12, 4, 1}, []int{0, 0, 1})
	if len(shape) != 2 || shape[0] != 6 || shape[1] != 4 || st[0][0] != 4 || st[1][0] != 0 {
		t.Errorf("collapse [2 3 4]: got %v %v, want [6 4] with strides [4 1] and [0 1]", shape, st)
	}
	shape, st = tensor.Collapse([]int{1, 1}, []int{5, 5})
	if len(shape) != 1 || shape[0] != 1 || st[0][0] != 1 {
		t.Errorf("collapse of size-1 dims: got %v %v, want [1] [1]", shape, st)
	}
}

func TestBucket(t *testing.T) {
	prev := int64(0)
	for _, n := range []int64{1, 4, 511, 512, 513, 4096, 1 << 20, 1<<20 + 1, 3 << 20, 100 << 20} {
		b := bucket(n)
		if b < n || b < prev {
			t.Errorf("bucket(%d) = %d: want ≥ %d and monotone", n, b, n)
		}
		if n > 1<<20 && b%(2<<20) != 0 || n <= 1<<20 && b%512 != 0 {
			t.Errorf("bucket(%d) = %d is not a size class", n, b)
		}
		if b-n >= max(512, 2<<20*int64(boolInt(n > 1<<20))) {
			t.Errorf("bucket(%d) = %d wastes too much", n, b)
		}
		prev = b
	}
}

func TestMatOperand(t *testing.T) {
	for _, c := range []struct {
		l         tensor.Layout
		trans, ok bool
		ld        int
	}{
		{tensor.Layout{Shape: []int{3, 4}, Strides: []int{4, 1}}, false, true, 4},
		{tensor.Layout{Shape: []int{3, 4}, Strides: []int{1, 3}}, true, true, 3},
		{tensor.Layout{Shape: []int{3, 4}, Strides: []int{8, 1}}, false, true, 8},
		{tensor.Layout{Shape: []int{3, 4}, Strides: []int{8, 2}}, false, false, 0},
		{tensor.Layout{Shape: []int{2, 3, 1}, Strides: []int{3, 1, 1}}, false, true, 1},
	} {
		trans, ld, ok := c.l.MatrixOperand()
		if ok != c.ok || ok && (trans != c.trans || ld != c.ld) {
			t.Errorf("MatrixOperand(%v): got trans=%v ld=%d ok=%v, want %v %d %v", c.l, trans, ld, ok, c.trans, c.ld, c.ok)
		}
	}
}

// TestPlanReduce checks the reduction plans: the chunks of a split
// reduction cover the reduced dim exactly, fit the grid, and give the GPU
// about splitBlocks blocks; the kernel choice follows the stride and the
// number of outputs.
func TestPlanReduce(t *testing.T) {
	cases := []struct {
		nout, n, r int
		lse        bool
		kind       int
	}{
		{1, 10, 1, false, reduceThread},        // short: thread per output
		{5000, 63, 7, false, reduceThread},     // short
		{1, 1 << 20, 1, false, reduceSplit},    // all elements: split
		{1, 10_000_000, 1, false, reduceSplit}, // all elements of a big tensor
		{1, 4096, 1, false, reduceSplit},       // two chunks
		{1, 2048, 1, false, reduceBlock},       // too short to split
		{2048, 50257, 1, false, reduceBlock},   // many rows: a block each
		{2304, 1024, 2304, false, reduceSplit}, // a bias gradient: tiled
		{3, 1_000_000, 3, false, reduceSplit},  // column sums of a tall matrix
		{1, 1 << 20, 1, true, reduceBlock},     // LogSumExp keeps one pass
		{3000, 500, 3000, true, reduceThread},
	}
	for _, c := range cases {
		p := planReduce(c.nout, c.n, c.r, c.lse)
		if p.kind != c.kind {
			t.Errorf("planReduce(%d outputs, n %d, stride %d, lse %v): kind %d, want %d", c.nout, c.n, c.r, c.lse, p.kind, c.kind)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		nout := 1 + r.IntN(5000)
		n := 64 + r.IntN(1<<22)
		if r.IntN(4) == 0 {
			nout = 1 + r.IntN(4)
		}
		stride := 1
		if r.IntN(2) == 0 {
			stride = nout
		}
		p := planReduce(nout, n, stride, false)
		if p.kind != reduceSplit {
			continue
		}
		if p.chunk <= 0 || p.chunks <= 0 || p.chunks > 65535 || p.chunk*p.chunks < n || (p.chunks-1)*p.chunk >= n {
			t.Fatalf("planReduce(%d, %d, %d): chunk %d × %d does not cover n exactly", nout, n, stride, p.chunk, p.chunks)
		}
		if p.tx < 1 || p.tx > 32 || p.tx&(p.tx-1) != 0 || (stride == 1 && p.tx != 1) {
			t.Fatalf("planReduce(%d, %d, %d): tx %d", nout, n, stride, p.tx)
		}
		blocks := (nout + p.tx - 1) / p.tx * p.chunks
		if blocks > 2*splitBlocks+nout && p.chunks > 1 {
			t.Fatalf("planReduce(%d, %d, %d): %d blocks, far more than %d", nout, n, stride, blocks, splitBlocks)
		}
		if stride == 1 && p.chunk < minChunk/2 {
			t.Fatalf("planReduce(%d, %d, 1): chunks of %d elements", nout, n, p.chunk)
		}
	}
}
