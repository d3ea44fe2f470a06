package blas

import (
	"fmt"
	"github.com/wickml/wick/internal/cpu"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"unsafe"

	"github.com/wickml/wick/internal/approx"
	"github.com/wickml/wick/internal/testseed"
)

// exclusive marks t as a test that changes package state which the
// kernels read without synchronisation (active, packPolicy): it must not
// run in parallel with any other test, which t.Setenv enforces (it panics
// in a parallel test or under a parallel parent). TestConcurrentSgemm's
// goroutines only read that state.
func exclusive(t testing.TB) {
	t.Helper()
	t.Setenv("WICK_TEST_EXCLUSIVE", "1")
}

// newRand returns a generator of test inputs with a fixed seed, or
// WICK_TEST_SEED's (internal/testseed), logged so that a failure can be
// replayed.
func newRand(t testing.TB) *rand.Rand {
	t.Helper()
	return rand.New(rand.NewPCG(testseed.Seed(t, 1), 0x5eed))
}

func randSlice(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = r.Float32()*2 - 1
	}
	return s
}

// naive computes element (i, j) of op(A)·op(B) (+ C0 when accumulate) in
// float64, and the sum of the magnitudes of its terms, which scales the
// rounding error.
func naive(g gemmCase, a, b, c0 []float32, i, j int) (want, scale float64) {
	for p := range g.k {
		var av, bv float32
		if g.transA {
			av = a[p*g.lda+i]
		} else {
			av = a[i*g.lda+p]
		}
		if g.transB {
			bv = b[j*g.ldb+p]
		} else {
			bv = b[p*g.ldb+j]
		}
		want += float64(av) * float64(bv)
		scale += math.Abs(float64(av) * float64(bv))
	}
	if g.acc {
		want += float64(c0[i*g.ldc+j])
		scale += math.Abs(float64(c0[i*g.ldc+j]))
	}
	return want, scale
}

// tol is the accepted error of a float32 product: 1e-5 relative to the sum
// of the magnitudes of the terms (which grows with k).
func tol(scale float64) float64 { return 1e-5*scale + 1e-6 }

// sentinel marks C's padding (columns past n within ldc, and past the last
// row): a kernel that writes outside the m×n block is caught.
var sentinel = float32(math.Float32frombits(0x7fc0dead))

func isSentinel(v float32) bool { return math.Float32bits(v) == 0x7fc0dead }

// bitDiff returns the first index at which got and want (of equal length)
// differ in a bit, or -1 when they are identical.
func bitDiff(got, want []float32) int {
	for x := range got {
		if math.Float32bits(got[x]) != math.Float32bits(want[x]) {
			return x
		}
	}
	return -1
}

type gemmCase struct {
	transA, transB, acc bool
	m, n, k             int
	lda, ldb, ldc       int
	threads             int
}

// padded returns g with leading dimensions wider than its matrices (A's,
// B's unless B is transposed, and C's), so that a product that reads or
// writes past a row is caught.
func (g gemmCase) padded() gemmCase {
	g.lda, g.ldb, g.ldc = g.k+3, g.n+1, g.n+5
	if g.transA {
		g.lda = g.m + 2
	}
	if g.transB {
		g.ldb = g.k
	}
	return g
}

func (g gemmCase) String() string {
	return fmt.Sprintf("tA=%v tB=%v acc=%v m=%d n=%d k=%d lda=%d ldb=%d ldc=%d threads=%d", g.transA, g.transB, g.acc, g.m, g.n, g.k, g.lda, g.ldb, g.ldc, g.threads)
}

// operands makes random A, B and C (with sentinels in C's padding) for g.
func (g gemmCase) operands(r *rand.Rand) (a, b, c []float32) {
	ar, aw := g.m, g.k
	if g.transA {
		ar, aw = aw, ar
	}
	br, bw := g.k, g.n
	if g.transB {
		br, bw = bw, br
	}
	a = randSlice(r, max(0, (ar-1)*g.lda+aw))
	b = randSlice(r, max(0, (br-1)*g.ldb+bw))
	c = randSlice(r, g.m*g.ldc+3)
	for i := range c {
		if i%g.ldc >= g.n || i >= g.m*g.ldc {
			c[i] = sentinel
		}
	}
	return a, b, c
}

// check compares C after a product against the float64 reference and the
// padding against the sentinels. Large products are checked on a sample:
// the first and last rows and columns (the ragged edges), and random ones.
func (g gemmCase) check(t *testing.T, what string, c, c0, a, b []float32) {
	t.Helper()
	for i, v := range c {
		if row, col := i/g.ldc, i%g.ldc; (row >= g.m || col >= g.n) && !isSentinel(v) {
			t.Errorf("%s %v: wrote %v outside C at row %d col %d", what, g, v, row, col)
			return
		}
	}
	rows, cols := make([]bool, g.m), make([]bool, g.n)
	if g.m*g.n*g.k <= 4e6 {
		for i := range rows {
			rows[i] = true
		}
	} else {
		// The sample depends on the case only, so a failure repeats.
		r := rand.New(rand.NewPCG(uint64(g.m)<<32|uint64(g.n), uint64(g.k)))
		for _, i := range []int{0, g.m - 1, g.m / 2, r.IntN(g.m), r.IntN(g.m)} {
			rows[i] = true
		}
		for _, j := range []int{0, g.n - 1, g.n / 2, r.IntN(g.n), r.IntN(g.n)} {
			cols[j] = true
		}
	}
	bad := 0
	for i := range g.m {
		for j := range g.n {
			if !rows[i] && !cols[j] {
				continue
			}
			w, s := naive(g, a, b, c0, i, j)
			if got := c[i*g.ldc+j]; !approx.Scalar(float64(got), w, 0, tol(s)) {
				t.Errorf("%s %v: C[%d][%d] = %v, want %v (tolerance %.3g)", what, g, i, j, got, w, tol(s))
				if bad++; bad > 5 {
					return
				}
			}
		}
	}
}

// randomCase draws a case with sizes around the block edges, leading
// dimensions past the widths, and random flags.
func randomCase(r *rand.Rand, maxDim int) gemmCase {
	// micro-tile (6, 16), in-place thresholds (64), row block (96), depth
	// block (256) and their neighbours
	edge := []int{1, 2, 5, 6, 7, 11, 12, 13, 15, 16, 17, 31, 33, 63, 64, 65, 95, 96, 97, 191, 192, 193, 255, 256, 257}
	dim := func() int {
		if r.IntN(2) == 0 {
			return edge[r.IntN(len(edge))]
		}
		return 1 + r.IntN(maxDim)
	}
	g := gemmCase{transA: r.IntN(2) == 0, transB: r.IntN(2) == 0, acc: r.IntN(2) == 0, m: dim(), n: dim(), k: dim()}
	ld := func(w int) int {
		if r.IntN(2) == 0 {
			return w
		}
		return w + 1 + r.IntN(9)
	}
	if g.transA {
		g.lda = ld(g.m)
	} else {
		g.lda = ld(g.k)
	}
	if g.transB {
		g.ldb = ld(g.k)
	} else {
		g.ldb = ld(g.n)
	}
	g.ldc = ld(g.n)
	g.threads = 1 + r.IntN(3)
	return g
}

// runCase runs one product through fn on a fresh C and checks it.
func runCase(t *testing.T, r *rand.Rand, what string, g gemmCase, fn func(g gemmCase, a, b, c []float32)) {
	t.Helper()
	a, b, c := g.operands(r)
	c0 := append([]float32(nil), c...)
	fn(g, a, b, c)
	g.check(t, what, c, c0, a, b)
}

// testPaths returns the paths to test: the pure-Go kernel and packing in
// each tile shape this package uses (which check the driver on any
// architecture), and every assembly path of this build that this machine
// runs; the others are skipped with a logged reason.
func testPaths(t *testing.T) []*path {
	// the 12×32 Go path packs B in a pass of its own and reads a
	// transposed A in place under every B panel, as the AVX-512 one
	// does; the 6×16 one packs them on first use, as the AVX2 one does
	g12 := goPath(12, 32, 192, 480, 4096)
	g12.kernPackB, g12.kernColsPackA = nil, nil
	ps := []*path{goPath(6, 16, 256, 96, 4096), g12}
	for _, p := range asmPaths {
		if cpu.Detected < p.level {
			t.Logf("skipping the %s path: this machine runs at most %v", p.name, cpu.Detected)
			continue
		}
		ps = append(ps, p)
	}
	if len(asmPaths) == 0 {
		t.Logf("no assembly kernels in this build; testing the Go ones only")
	}
	return ps
}

// smallBlocks returns a copy of p with blocks small enough that random
// shapes cross several depth blocks, row blocks and B slabs.
func smallBlocks(p *path) *path {
	q := *p
	q.name += "/small-blocks"
	q.kc, q.mc, q.nc = 40, 2*p.mr, 3*p.nr
	// deeper blocks where C has more than 40×40 elements
	q.kcWide, q.wideC = 64, 4*40*40
	return &q
}

// TestKernels runs every micro-kernel on packed panels and on operands read
// in place (A row- or column-major with padding, B with a row stride or
// packed: the main kernels' fixed-offset loops), 1-3 tiles a call, and
// compares with the float64 reference; each path's kernel for A read in
// place from a transposed A and the one that packs B too (the edge
// kernels: TestEdgeKernels).
func TestKernels(t *testing.T) {
	r := newRand(t)
	var kernels []*path
	for _, p := range testPaths(t) {
		kernels = append(kernels, p)
		if p.kernCols != nil {
			q := *p
			q.name += "/cols"
			q.kern = p.kernCols
			kernels = append(kernels, &q)
		}
		if p.kernPackB != nil {
			// the first tile by kernPackB, which must leave B's rows
			// packed; the others by kern on that packed panel, as the
			// driver runs them
			q := *p
			q.name += "/packB"
			q.kern = func(tiles, k int, a *float32, rsA, csA, aNext int, b *float32, rsB int, c *float32, ldc int, acc int) {
				nr := p.nr
				bp := randSlice(r, k*nr)
				p.kernPackB(k, a, rsA, csA, b, rsB, &bp[0], c, ldc, acc)
				bs := unsafe.Slice(b, (k-1)*rsB+nr)
				for pp := range k {
					if got, want := bp[pp*nr:][:nr], bs[pp*rsB:][:nr]; !slices.Equal(got, want) {
						t.Fatalf("%s: k=%d: packed row %d is %v, want %v", q.name, k, pp, got, want)
					}
				}
				if tiles > 1 {
					p.kern(tiles-1, k, (*float32)(unsafe.Add(unsafe.Pointer(a), 4*aNext)), rsA, csA, aNext, &bp[0], nr,
						(*float32)(unsafe.Add(unsafe.Pointer(c), 4*p.mr*ldc)), ldc, acc)
				}
			}
			kernels = append(kernels, &q)
		}
		if p.kernColsPackA != nil {
			// where A is read with rsA = 1 (packed, or in place from a
			// transposed A), kernColsPackA, which must also leave each
			// tile's A in its packed panel
			q := *p
			q.name += "/colsPackA"
			q.kern = func(tiles, k int, a *float32, rsA, csA, aNext int, b *float32, rsB int, c *float32, ldc int, acc int) {
				if rsA != 1 {
					p.kern(tiles, k, a, rsA, csA, aNext, b, rsB, c, ldc, acc)
					return
				}
				mr := p.mr
				ap := randSlice(r, tiles*k*mr)
				p.kernColsPackA(tiles, k, a, rsA, csA, aNext, b, rsB, c, ldc, acc, &ap[0])
				as := unsafe.Slice(a, (tiles-1)*aNext+(mr-1)+(k-1)*csA+1)
				for tt := range tiles {
					for pp := range k {
						for rr := range mr {
							if got, want := ap[tt*k*mr+pp*mr+rr], as[tt*aNext+rr+pp*csA]; got != want {
								t.Fatalf("%s: k=%d: tile %d's packed A[%d][%d] = %v, want %v", q.name, k, tt, rr, pp, got, want)
							}
						}
					}
				}
			}
			kernels = append(kernels, &q)
		}
	}
	for _, p := range kernels {
		mr, nr := p.mr, p.nr
		// depths around the unrolled loop's entry points: the AVX-512
		// kernel fetches C in one go below 48 steps, during its last 48
		// from 48 on
		for _, k := range []int{1, 2, 3, 4, 5, 7, 8, 9, 16, 31, 32, 35, 36, 47, 48, 51, 52, 64, 255, 256, 1 + r.IntN(300)} {
			for _, acc := range []bool{false, true} {
				for _, layout := range []string{"packed", "A rows", "A rows, B packed", "A columns"} {
					tiles := 1 + r.IntN(3)
					// describe the kernel's operands as a (tiles·mr)×k·k×nr gemm
					g := gemmCase{acc: acc, m: tiles * mr, n: nr, k: k, ldc: nr + r.IntN(2)*(1+r.IntN(20))}
					g.ldb = nr
					if layout == "A rows" || layout == "A columns" {
						g.ldb += r.IntN(2) * (1 + r.IntN(20))
					}
					var rsA, csA, aNext int
					switch layout {
					case "packed":
						g.lda = k
					case "A rows", "A rows, B packed":
						g.lda = k + r.IntN(5)
						rsA, csA, aNext = g.lda, 1, mr*g.lda
					case "A columns":
						g.transA, g.lda = true, g.m+r.IntN(5)
						rsA, csA, aNext = 1, g.lda, mr
					}
					a, b, c := g.operands(r)
					ak := a
					if layout == "packed" {
						// tile t's panel at t·k·mr, column by column
						ak, rsA, csA, aNext = make([]float32, tiles*k*mr), 1, mr, k*mr
						for i := range g.m {
							for pp := range k {
								ak[(i/mr)*k*mr+pp*mr+i%mr] = a[i*g.lda+pp]
							}
						}
					}
					c0 := append([]float32(nil), c...)
					flag := 0
					if acc {
						flag = 1
					}
					p.kern(tiles, k, &ak[0], rsA, csA, aNext, &b[0], g.ldb, &c[0], g.ldc, flag)
					g.check(t, fmt.Sprintf("kernel %s %s, %d tiles", p.name, layout, tiles), c, c0, a, b)
				}
			}
		}
	}
}

// TestEdgeKernels runs every path's edge kernel across 1-5 B panels,
// packed or read in place, with A packed as the driver packs a ragged tile
// (in the full kernel's panel) or read in place, and compares with the
// float64 reference.
func TestEdgeKernels(t *testing.T) {
	r := newRand(t)
	for _, p := range testPaths(t) {
		if p.edge == nil {
			continue
		}
		er, nr := p.edgeRows, p.nr
		for _, k := range []int{1, 2, 3, 4, 5, 7, 8, 9, 16, 31, 64, 255, 1 + r.IntN(300)} {
			for _, acc := range []bool{false, true} {
				for _, layout := range []string{"packed", "A rows", "A columns", "B in place"} {
					panels := 1 + r.IntN(5)
					// the kernel's operands as an er×k·k×(panels·nr) gemm
					g := gemmCase{acc: acc, m: er, n: panels * nr, k: k, ldb: panels*nr + r.IntN(2)*(1+r.IntN(20))}
					g.ldc = g.n + r.IntN(2)*(1+r.IntN(20))
					g.lda = k + r.IntN(5)
					if layout == "A columns" {
						g.transA, g.lda = true, er+r.IntN(5)
					}
					a, b, c := g.operands(r)
					// A: packed in the full kernel's panel (mr rows, column
					// by column), or in place
					ak, rsA, csA := a, g.lda, 1
					switch layout {
					case "A columns":
						rsA, csA = 1, g.lda
					case "packed", "B in place":
						ak, rsA, csA = make([]float32, k*p.mr), 1, p.mr
						for i := range er {
							for pp := range k {
								ak[pp*p.mr+i] = a[i*g.lda+pp]
							}
						}
					}
					// B: panel by panel (k rows of nr), or in place
					bk, rsB, bNext := b, g.ldb, nr
					if layout != "B in place" {
						bk, rsB, bNext = make([]float32, panels*k*nr), nr, k*nr
						for q := range panels {
							for pp := range k {
								copy(bk[q*k*nr+pp*nr:][:nr], b[pp*g.ldb+q*nr:][:nr])
							}
						}
					}
					c0 := append([]float32(nil), c...)
					flag := 0
					if acc {
						flag = 1
					}
					p.edge(panels, k, &ak[0], rsA, csA, &bk[0], rsB, bNext, &c[0], g.ldc, flag)
					g.check(t, fmt.Sprintf("edge kernel %s %s, %d panels", p.name, layout, panels), c, c0, a, b)
				}
			}
		}
	}
}

func TestPackA(t *testing.T) {
	r := newRand(t)
	for _, pa := range testPaths(t) {
		mr := pa.mr
		for range 100 {
			transA := r.IntN(2) == 0
			m, k := 1+r.IntN(60), 1+r.IntN(40)
			lda := k + r.IntN(3)
			if transA {
				lda = m + r.IntN(3)
			}
			a := randSlice(r, 70*70)
			i0, p0 := r.IntN(m), r.IntN(k)
			rows, kb := 1+r.IntN(m-i0), 1+r.IntN(k-p0)
			dst := randSlice(r, ceilDiv(rows, mr)*mr*kb)
			pa.packA(transA, a, lda, i0, rows, p0, kb, dst)
			for q := range ceilDiv(rows, mr) {
				for p := range kb {
					for x := range mr {
						i := i0 + q*mr + x
						var want float32
						if q*mr+x < rows {
							if transA {
								want = a[(p0+p)*lda+i]
							} else {
								want = a[i*lda+p0+p]
							}
						}
						rsA, csA := pa.packedAStrides(transA, kb)
						if got := dst[q*mr*kb+x*rsA+p*csA]; got != want {
							t.Fatalf("%s: packA(transA=%v, i0=%d rows=%d p0=%d kb=%d): panel %d [%d][%d] = %v, want %v", pa.name, transA, i0, rows, p0, kb, q, p, x, got, want)
						}
					}
				}
			}
		}
	}
}

func TestPackB(t *testing.T) {
	r := newRand(t)
	for _, pa := range testPaths(t) {
		nr := pa.nr
		for range 100 {
			transB := r.IntN(2) == 0
			k, n := 1+r.IntN(40), 1+r.IntN(80)
			ldb := n + r.IntN(3)
			if transB {
				ldb = k + r.IntN(3)
			}
			b := randSlice(r, 90*90)
			p0, j0 := r.IntN(k), r.IntN(n)
			kb, cols := 1+r.IntN(k-p0), 1+r.IntN(n-j0)
			dst := randSlice(r, ceilDiv(cols, nr)*nr*kb)
			pa.packB(transB, b, ldb, p0, kb, j0, cols, dst)
			for q := range ceilDiv(cols, nr) {
				for p := range kb {
					for x := range nr {
						j := j0 + q*nr + x
						var want float32
						if q*nr+x < cols {
							if transB {
								want = b[j*ldb+p0+p]
							} else {
								want = b[(p0+p)*ldb+j]
							}
						}
						if got := dst[q*nr*kb+p*nr+x]; got != want {
							t.Fatalf("%s: packB(transB=%v, p0=%d kb=%d j0=%d cols=%d): panel %d [%d][%d] = %v, want %v", pa.name, transB, p0, kb, j0, cols, q, p, x, got, want)
						}
					}
				}
			}
		}
	}
}

// TestSgemm runs the public entry point (assembly kernel where the CPU has
// it) on random shapes, and compares it with the float64 reference.
func TestSgemm(t *testing.T) {
	r := newRand(t)
	t.Logf("kernel: %s", Kernel())
	n := 120
	if testing.Short() {
		n = 30
	}
	for range n {
		g := randomCase(r, 300)
		runCase(t, r, "Sgemm", g, func(g gemmCase, a, b, c []float32) {
			Sgemm(g.transA, g.transB, g.m, g.n, g.k, a, g.lda, b, g.ldb, c, g.ldc, g.acc, g.threads)
		})
	}
}

// TestSgemmLarge covers products big enough to be split over threads and
// over several depth blocks and B slabs.
func TestSgemmLarge(t *testing.T) {
	r := newRand(t)
	cases := []gemmCase{
		{m: 301, n: 4100, k: 530, threads: 2},
		{m: 700, n: 257, k: 300, threads: 3, transA: true, acc: true},
		{m: 64, n: 999, k: 64, threads: 2, transB: true},
		{m: 1000, n: 20, k: 700, threads: 2, transA: true, transB: true, acc: true},
	}
	for _, g := range cases {
		g = g.padded()
		runCase(t, r, "Sgemm", g, func(g gemmCase, a, b, c []float32) {
			Sgemm(g.transA, g.transB, g.m, g.n, g.k, a, g.lda, b, g.ldb, c, g.ldc, g.acc, g.threads)
		})
	}
}

// TestThreadsSameBits checks that the number of threads does not change
// a single bit of the blocked driver's result: each thread count splits
// the work differently (shared depth blocks below splitRows rows per
// thread, ranges of rows of its own above), but every element is summed
// in the same depth blocks, in the same order.
func TestThreadsSameBits(t *testing.T) {
	r := newRand(t)
	for _, p0 := range testPaths(t) {
		for _, p := range []*path{p0, smallBlocks(p0)} {
			for range 12 {
				g := randomCase(r, 300)
				if r.IntN(2) == 0 {
					g.m = 2*splitRows + r.IntN(6*splitRows) // split for up to 2-8 threads
				}
				g.threads = 1
				a, b, c := g.operands(r)
				want := append([]float32(nil), c...)
				gemmPacked(p, g.transA, g.transB, g.m, g.n, g.k, a, g.lda, b, g.ldb, want, g.ldc, g.acc, 1)
				for _, threads := range []int{2, 3, 4} {
					got := append([]float32(nil), c...)
					gemmPacked(p, g.transA, g.transB, g.m, g.n, g.k, a, g.lda, b, g.ldb, got, g.ldc, g.acc, threads)
					if x := bitDiff(got, want); x >= 0 {
						t.Fatalf("%s %v: C[%d][%d] = %v with %d threads, %v with one", p.name, g, x/g.ldc, x%g.ldc, got[x], threads, want[x])
					}
				}
			}
		}
	}
}

// TestDriver runs the blocked driver under each packing policy, with each
// path of testPaths, as blocked for this machine and with small blocks.
func TestDriver(t *testing.T) {
	exclusive(t)
	r := newRand(t)
	defer func(p int) { packPolicy = p }(packPolicy)
	for _, p0 := range testPaths(t) {
		for _, p := range []*path{p0, smallBlocks(p0)} {
			for _, policy := range []int{packAlways, packNever, packAuto} {
				packPolicy = policy
				for range 15 {
					g := randomCase(r, 300)
					what := fmt.Sprintf("gemmPacked(%s, policy %d)", p.name, policy)
					runCase(t, r, what, g, func(g gemmCase, a, b, c []float32) {
						gemmPacked(p, g.transA, g.transB, g.m, g.n, g.k, a, g.lda, b, g.ldb, c, g.ldc, g.acc, g.threads)
					})
				}
			}
		}
	}
}

// TestAsmMatchesReference compares each assembly path that this machine
// runs, through Sgemm, with the pure-Go fallback (gemmRef) on the same
// operands, in all four layouts.
func TestAsmMatchesReference(t *testing.T) {
	exclusive(t)
	r := newRand(t)
	saved := active
	defer func() { active = saved }()
	for _, p := range testPaths(t) {
		if p.level == cpu.Generic {
			continue
		}
		for i := range 40 {
			g := randomCase(r, 200)
			g.transA, g.transB = i&1 != 0, i&2 != 0
			g.lda, g.ldb = g.k+r.IntN(3), g.n+r.IntN(3)
			if g.transA {
				g.lda = g.m + r.IntN(3)
			}
			if g.transB {
				g.ldb = g.k + r.IntN(3)
			}
			a, b, c := g.operands(r)
			ref := append([]float32(nil), c...)
			c0 := append([]float32(nil), c...)
			active = p
			Sgemm(g.transA, g.transB, g.m, g.n, g.k, a, g.lda, b, g.ldb, c, g.ldc, g.acc, g.threads)
			active = nil
			Sgemm(g.transA, g.transB, g.m, g.n, g.k, a, g.lda, b, g.ldb, ref, g.ldc, g.acc, g.threads)
			for i := range g.m {
				for j := range g.n {
					x, y := c[i*g.ldc+j], ref[i*g.ldc+j]
					_, scale := naive(g, a, b, c0, i, j)
					if !approx.Scalar(float64(x), float64(y), 0, 2*tol(scale)) {
						t.Fatalf("%s %v: C[%d][%d]: assembly %v, gemmRef %v", p.name, g, i, j, x, y)
					}
				}
			}
		}
	}
}

// TestGeneric runs the pure-Go fallback through Sgemm.
func TestGeneric(t *testing.T) {
	exclusive(t)
	r := newRand(t)
	saved := active
	active = nil
	defer func() { active = saved }()
	for range 30 {
		g := randomCase(r, 150)
		runCase(t, r, "Sgemm(generic)", g, func(g gemmCase, a, b, c []float32) {
			Sgemm(g.transA, g.transB, g.m, g.n, g.k, a, g.lda, b, g.ldb, c, g.ldc, g.acc, g.threads)
		})
	}
}

func TestSgemmZeroK(t *testing.T) {
	c := []float32{1, 2, 3, 4, 5, 6}
	Sgemm(false, false, 2, 2, 0, nil, 1, nil, 2, c, 3, true, 1)
	if c[0] != 1 || c[4] != 5 {
		t.Fatalf("k=0 accumulate changed C: %v", c)
	}
	Sgemm(false, false, 2, 2, 0, nil, 1, nil, 2, c, 3, false, 1)
	if want := []float32{0, 0, 3, 0, 0, 6}; fmt.Sprint(c) != fmt.Sprint(want) {
		t.Fatalf("k=0 gives C = %v, want %v", c, want)
	}
}

func TestSgemmPanics(t *testing.T) {
	mustPanic := func(name string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s: no panic", name)
			}
		}()
		f()
	}
	a, b, c := make([]float32, 6), make([]float32, 6), make([]float32, 4)
	mustPanic("short C", func() { Sgemm(false, false, 2, 3, 2, a, 2, b, 3, c, 3, false, 1) })
	mustPanic("short A", func() { Sgemm(false, false, 4, 1, 2, a, 2, b, 1, c, 1, false, 1) })
	mustPanic("small lda", func() { Sgemm(false, false, 2, 2, 3, a, 2, b, 2, c, 2, false, 1) })
	mustPanic("small ldb transposed", func() { Sgemm(false, true, 2, 2, 3, a, 3, b, 2, c, 2, false, 1) })
	mustPanic("negative", func() { Sgemm(false, false, -1, 2, 3, a, 3, b, 2, c, 2, false, 1) })
}

func TestAlignedFloats(t *testing.T) {
	for n := range 40 {
		s := alignedFloats(n + 1)
		if uintptr(unsafe.Pointer(&s[0]))%64 != 0 || len(s) != n+1 {
			t.Fatalf("alignedFloats(%d): address %p, len %d", n+1, &s[0], len(s))
		}
	}
}

// TestKernelName checks that Sgemm runs the best path of this build at the
// level internal/cpu chose (WICK_CPU included).
func TestKernelName(t *testing.T) {
	want := "generic"
	if p := pathFor(cpu.Use); p != nil {
		want = p.name
	}
	if got := Kernel(); got != want {
		t.Fatalf("Kernel() = %q, want %q", got, want)
	}
	if active != nil && active.level > cpu.Detected {
		t.Fatalf("the %s path needs %v; this machine runs %v", active.name, active.level, cpu.Detected)
	}
	if active != nil {
		t.Logf("blocking: mr=%d nr=%d kc=%d mc=%d nc=%d (L1d %d KiB, L2 %d KiB)", active.mr, active.nr, active.kc, active.mc, active.nc, cpu.L1D>>10, cpu.L2>>10)
	}
	t.Logf("kernel: %s", Kernel())
}

// TestBlocking checks the cache blocking rule and its fallbacks.
func TestBlocking(t *testing.T) {
	cases := []struct{ mr, nr, l1, l2, kc, mc int }{
		{6, 16, 0, 0, 256, 96},                  // unknown caches: the defaults
		{6, 16, 16 << 10, 512 << 10, 256, 126},  // Zen 2-4: 16 KiB B panel
		{12, 32, 32 << 10, 2 << 20, 256, 504},   // Sapphire Rapids, 2/3 of L1
		{12, 32, 2 << 10, 64 << 10, 64, 60},     // tiny caches: the kc floor
		{6, 16, 512 << 10, 64 << 20, 512, 1020}, // huge caches: the ceilings
	}
	for _, c := range cases {
		kc, mc := blocking(c.mr, c.nr, c.l1, c.l2, 256, 96)
		if kc != c.kc || mc != c.mc {
			t.Errorf("blocking(%d×%d, B panel %d, L2 %d) = kc %d, mc %d; want %d, %d", c.mr, c.nr, c.l1, c.l2, kc, mc, c.kc, c.mc)
		}
		if mc%c.mr != 0 || kc%8 != 0 {
			t.Errorf("blocking(%d×%d): kc %d, mc %d not multiples of 8 and mr", c.mr, c.nr, kc, mc)
		}
	}
}

// TestSgemmFewRowsTransB covers the dot-product path (m ≤ gemvMaxRows,
// transposed B): widths around the kernel's 4 rows and 8 lanes, padded
// rows, accumulation and threads.
func TestSgemmFewRowsTransB(t *testing.T) {
	r := newRand(t)
	for m := 1; m <= gemvMaxRows+1; m++ {
		for _, n := range []int{1, 3, 4, 5, 8, 63, 64, 65, 257, 1031} {
			for _, k := range []int{1, 7, 8, 9, 16, 64, 771} {
				g := gemmCase{transB: true, acc: r.IntN(2) == 0, m: m, n: n, k: k, threads: 1 + r.IntN(3)}
				g.lda, g.ldb, g.ldc = k+r.IntN(3), k+r.IntN(3), n+r.IntN(3)
				runCase(t, r, "Sgemm", g, func(g gemmCase, a, b, c []float32) {
					Sgemm(g.transA, g.transB, g.m, g.n, g.k, a, g.lda, b, g.ldb, c, g.ldc, g.acc, g.threads)
				})
			}
		}
	}
}

// TestSgemmOneThreadAllocs checks that the blocked driver on one thread
// allocates nothing per call once its packing buffers are pooled (its
// loops once escaped to the heap on every call, which cost the attention
// products of the CPU recipe a tenth of their time).
func TestSgemmOneThreadAllocs(t *testing.T) {
	if active == nil {
		t.Skipf("no assembly path on this machine or build (kernel %s): the pure-Go fallback is not the blocked driver", Kernel())
	}
	if raceEnabled {
		t.Skip("under the race detector sync.Pool drops buffers on purpose")
	}
	for _, s := range []benchShape{
		{"qk64x32x64NT", 64, 32, 64, false, true},
		{"dv64x64x32TN", 64, 64, 32, true, false},
		{"sq67NN", 67, 67, 67, false, false},
		{"gpt768x128x512TT", 768, 128, 512, true, true},
	} {
		a, lda, b, ldb, c := s.operands()
		n := testing.AllocsPerRun(20, func() {
			Sgemm(s.transA, s.transB, s.m, s.n, s.k, a, lda, b, ldb, c, s.n, false, 1)
		})
		if n != 0 {
			t.Errorf("%s: %v allocations per one-thread Sgemm, want 0", s.name, n)
		}
	}
}

// TestSgemmRange checks SgemmRange against Sgemm bit for bit on products
// whose terms outside the range are products with zeros (op(A)'s columns
// or op(B)'s rows there zeroed, the other factor random, so that some of
// the dropped terms are -0), with every path of testPaths, each also with
// small blocks so that ranges cut through several depth blocks, and the
// pure-Go fallback.
func TestSgemmRange(t *testing.T) {
	exclusive(t)
	r := newRand(t)
	saved := active
	defer func() { active = saved }()
	paths := []*path{nil}
	for _, p := range testPaths(t) {
		paths = append(paths, p, smallBlocks(p))
	}
	for _, p := range paths {
		active = p
		name := "generic"
		if p != nil {
			name = p.name
		}
		for i := range 60 {
			g := randomCase(r, 300)
			g.acc = false
			if i%8 == 0 { // the dot-product path
				g.transA, g.transB, g.m, g.lda, g.ldb = false, true, 1+r.IntN(gemvMaxRows), g.k, g.k
			}
			k0 := r.IntN(g.k + 1)
			k1 := k0 + r.IntN(g.k-k0+1)
			switch r.IntN(4) {
			case 0:
				k0 = 0
			case 1:
				k1 = g.k
			}
			a, b, c := g.operands(r)
			zeroA := r.IntN(2) == 0
			for p := range g.k {
				if p >= k0 && p < k1 {
					continue
				}
				if zeroA {
					for i := range g.m {
						if g.transA {
							a[p*g.lda+i] = 0
						} else {
							a[i*g.lda+p] = 0
						}
					}
				} else {
					for j := range g.n {
						if g.transB {
							b[j*g.ldb+p] = 0
						} else {
							b[p*g.ldb+j] = 0
						}
					}
				}
			}
			want := append([]float32(nil), c...)
			Sgemm(g.transA, g.transB, g.m, g.n, g.k, a, g.lda, b, g.ldb, want, g.ldc, false, g.threads)
			SgemmRange(g.transA, g.transB, g.m, g.n, g.k, k0, k1, a, g.lda, b, g.ldb, c, g.ldc, g.threads)
			if x := bitDiff(c, want); x >= 0 {
				t.Fatalf("%s %v, depths [%d, %d): C[%d][%d] = %v, Sgemm gives %v", name, g, k0, k1, x/g.ldc, x%g.ldc, c[x], want[x])
			}
		}
	}
}

func TestSgemmRangePanics(t *testing.T) {
	a, b, c := make([]float32, 6), make([]float32, 6), make([]float32, 4)
	for _, r := range [][2]int{{-1, 2}, {2, 1}, {0, 4}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("depths [%d, %d) of 3: no panic", r[0], r[1])
				}
			}()
			SgemmRange(false, false, 2, 2, 3, r[0], r[1], a, 3, b, 2, c, 2, 1)
		}()
	}
}

// TestConcurrentSgemm runs multi-threaded products from several goroutines
// at once (so that their parts share the worker pool and the pooled
// packing buffers): products split into rows of their own per thread and
// products that share their depth blocks' tiles, each compared bit for bit
// with the same product computed alone. CI runs it under -race.
func TestConcurrentSgemm(t *testing.T) {
	r := newRand(t)
	cases := []gemmCase{
		{m: 2*splitRows + 29, n: 200, k: 300, threads: 2},
		{m: 3 * splitRows, n: 70, k: 130, threads: 3, transA: true, acc: true},
		{m: 48, n: 300, k: 200, threads: 2, transB: true},
		{m: splitRows + 1, n: 150, k: 90, threads: 2, transA: true, transB: true},
	}
	const goroutines = 2 // per product
	type product struct {
		g       gemmCase
		a, b, c []float32
		want    []float32
	}
	var ps []product
	for _, g := range cases {
		g = g.padded()
		a, b, c := g.operands(r)
		want := append([]float32(nil), c...)
		Sgemm(g.transA, g.transB, g.m, g.n, g.k, a, g.lda, b, g.ldb, want, g.ldc, g.acc, g.threads)
		g.check(t, "Sgemm", want, c, a, b)
		ps = append(ps, product{g: g, a: a, b: b, c: c, want: want})
	}
	var wg sync.WaitGroup
	errs := make(chan string, goroutines*len(ps))
	for _, p := range ps {
		for range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				g := p.g
				for range 3 {
					c := append([]float32(nil), p.c...)
					Sgemm(g.transA, g.transB, g.m, g.n, g.k, p.a, g.lda, p.b, g.ldb, c, g.ldc, g.acc, g.threads)
					if x := bitDiff(c, p.want); x >= 0 {
						errs <- fmt.Sprintf("%v: C[%d][%d] = %v beside other products, %v alone", g, x/g.ldc, x%g.ldc, c[x], p.want[x])
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
