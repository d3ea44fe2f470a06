// Command gen writes the cases of the kernel emulation check
// (scripts/kernel_emu.sh): random inputs for every kernel of csrc/, strided
// and broadcast layouts included, and the CPU backend's outputs for them.
// The attention softmax and Philox cases are computed here from their
// definitions. Usage: go run ./scripts/kernel_emu/gen FILE
package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"

	"github.com/wickml/wick/internal/philox"
	"github.com/wickml/wick/tensor"
)

var w *bufio.Writer
var c tensor.Backend
var r = rand.New(rand.NewPCG(42, 1))

type arr struct {
	f []float32
	i []int64
}

// rec writes one case: a header line (kind, name, counts), the integer
// parameters, then each array as a "f32 N" or "i64 N" line and N
// little-endian values.
func rec(kind, name string, ints []int64, arrays ...arr) {
	fmt.Fprintf(w, "%s %s %d %d\n", kind, name, len(ints), len(arrays))
	for _, v := range ints {
		fmt.Fprintf(w, "%d ", v)
	}
	fmt.Fprintln(w)
	for _, a := range arrays {
		if a.i != nil {
			fmt.Fprintf(w, "i64 %d\n", len(a.i))
			binary.Write(w, binary.LittleEndian, a.i)
		} else {
			fmt.Fprintf(w, "f32 %d\n", len(a.f))
			binary.Write(w, binary.LittleEndian, a.f)
		}
		fmt.Fprintln(w)
	}
}

// F and I wrap float32 and int64 arrays.
func F(f []float32) arr { return arr{f: f} }

// I wraps an int64 array.
func I(i []int64) arr { return arr{i: i} }

func randn(n int, scale float64) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(r.NormFloat64() * scale)
		if r.IntN(30) == 0 {
			out[i] = float32(math.Round(float64(out[i])))
		}
	}
	return out
}

func whole(n int) tensor.Layout { return tensor.Layout{Shape: []int{n}, Strides: []int{1}} }

// view lays out shape with the dims in a random memory order, random steps
// and padding, a random offset and, when bc, stride 0 on some dims; it
// returns the layout and the storage size.
func view(shape []int, bc bool) (tensor.Layout, int) {
	nd := len(shape)
	order := r.Perm(nd)
	st := make([]int, nd)
	size := 1
	for i := nd - 1; i >= 0; i-- {
		d := order[i]
		step := 1 + r.IntN(2)
		st[d] = size * step
		size *= (shape[d]-1)*step + 1 + r.IntN(2)
	}
	if bc {
		for d := range nd {
			if r.IntN(3) == 0 {
				st[d] = 0
			}
		}
	}
	off := r.IntN(3)
	return tensor.Layout{Shape: shape, Strides: st, Offset: off}, off + size
}

func layoutInts(l tensor.Layout) []int64 {
	out := []int64{int64(len(l.Shape))}
	for _, v := range l.Shape {
		out = append(out, int64(v))
	}
	for _, v := range l.Strides {
		out = append(out, int64(v))
	}
	return append(out, int64(l.Offset))
}

func shape() []int {
	s := make([]int, 1+r.IntN(4))
	for i := range s {
		s[i] = 1 + r.IntN(5)
	}
	return s
}

func numel(s []int) int {
	n := 1
	for _, v := range s {
		n *= v
	}
	return n
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gen FILE")
		os.Exit(2)
	}
	f, err := os.Create(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	w = bufio.NewWriter(f)
	c, _ = tensor.BackendFor(tensor.CPU)
	writeCases()
	writeLlamaCases()
	writeHalfCases()
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	if err := f.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// writeCases writes every case.
func writeCases() {
	// unary over strided views
	for op := tensor.OpNeg; op <= tensor.OpSquare; op++ {
		for k := range 3 {
			sh := shape()
			l, n := view(sh, k == 2)
			x := randn(n, 2)
			if op == tensor.OpLog || op == tensor.OpSqrt || op == tensor.OpRsqrt || op == tensor.OpPowScalar {
				for i := range x {
					x[i] = float32(math.Abs(float64(x[i]))) + 0.01
				}
			}
			if r.IntN(2) == 0 && len(x) > 3 {
				x[1], x[2] = float32(math.NaN()), float32(math.Inf(-1))
			}
			p := tensor.UnaryParams{A: 1.5, B: 2}
			if op == tensor.OpClamp {
				p.A = -0.5
			}
			src := c.FromFloat32s(x)
			dst := c.Alloc(tensor.Float32, numel(sh))
			c.Unary(op, p, dst, src, l)
			rec("unary", op.String(), append([]int64{int64(op)}, layoutInts(l)...), F([]float32{p.A, p.B}), F(x), F(c.Float32s(dst, whole(numel(sh)))))
			// grad, contiguous
			n2 := numel(sh)
			xs := c.Float32s(src, l)
			y := c.Float32s(dst, whole(n2))
			g := randn(n2, 1)
			gd := c.Alloc(tensor.Float32, n2)
			c.UnaryGrad(op, p, gd, c.FromFloat32s(g), c.FromFloat32s(xs), c.FromFloat32s(y), n2)
			rec("unarygrad", op.String(), []int64{int64(op), int64(n2)}, F([]float32{p.A, p.B}), F(g), F(xs), F(y), F(c.Float32s(gd, whole(n2))))
		}
	}
	// binary over broadcast/strided views
	for _, op := range tensor.BinaryOps() {
		for range 3 {
			sh := shape()
			la, na := view(sh, true)
			lb, nb := view(sh, true)
			a, b := randn(na, 2), randn(nb, 2)
			if op == tensor.OpPow {
				for i := range a {
					a[i] = float32(math.Abs(float64(a[i]))) + 0.1
				}
			}
			dst := c.Alloc(tensor.Float32, numel(sh))
			c.Binary(op, dst, c.FromFloat32s(a), la, c.FromFloat32s(b), lb)
			ints := append([]int64{int64(op)}, layoutInts(la)...)
			ints = append(ints, layoutInts(lb)...)
			rec("binary", op.String(), ints, F(a), F(b), F(c.Float32s(dst, whole(numel(sh)))))
			if op >= tensor.OpEq {
				ai, bi := make([]int64, na), make([]int64, nb)
				for i := range ai {
					ai[i] = int64(r.IntN(3)) << 40
				}
				for i := range bi {
					bi[i] = int64(r.IntN(3)) << 40
				}
				c.Binary(op, dst, c.FromInt64s(ai), la, c.FromInt64s(bi), lb)
				rec("compare", op.String(), ints, I(ai), I(bi), F(c.Float32s(dst, whole(numel(sh)))))
			}
		}
	}
	// where
	for range 4 {
		sh := shape()
		lc, nc := view(sh, true)
		la, na := view(sh, true)
		lb, nb := view(sh, true)
		cond := randn(nc, 1)
		for i := range cond {
			if r.IntN(2) == 0 {
				cond[i] = 0
			}
		}
		a, b := randn(na, 1), randn(nb, 1)
		dst := c.Alloc(tensor.Float32, numel(sh))
		c.Where(dst, c.FromFloat32s(cond), lc, c.FromFloat32s(a), la, c.FromFloat32s(b), lb)
		ints := append(layoutInts(lc), layoutInts(la)...)
		ints = append(ints, layoutInts(lb)...)
		rec("where", "where", ints, F(cond), F(a), F(b), F(c.Float32s(dst, whole(numel(sh)))))
	}
	// copy and casts, strided dst and src
	for kind := range 4 {
		for range 3 {
			sh := shape()
			ld, nd := view(sh, false)
			ls, ns := view(sh, kind == 0)
			dstF, srcF := kind == 0 || kind == 2, kind == 0 || kind == 3
			var d tensor.Storage
			var dinit, sarr arr
			var s tensor.Storage
			if dstF {
				x := make([]float32, nd)
				for i := range x {
					x[i] = float32(math.NaN())
				}
				d, dinit = c.FromFloat32s(x), F(x)
			} else {
				x := make([]int64, nd)
				for i := range x {
					x[i] = -777
				}
				d, dinit = c.FromInt64s(x), I(x)
			}
			if srcF {
				x := randn(ns, 1000)
				s, sarr = c.FromFloat32s(x), F(x)
			} else {
				x := make([]int64, ns)
				for i := range x {
					x[i] = r.Int64N(1<<40) - 1<<39
				}
				s, sarr = c.FromInt64s(x), I(x)
			}
			c.Copy(d, ld, s, ls)
			var out arr
			if dstF {
				out = F(c.Float32s(d, whole(nd)))
			} else {
				out = I(c.Int64s(d, whole(nd)))
			}
			ints := append([]int64{int64(kind)}, layoutInts(ld)...)
			ints = append(ints, layoutInts(ls)...)
			rec("copy", fmt.Sprintf("kind%d", kind), ints, dinit, sarr, out)
		}
	}
	// fill
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Int64} {
		sh := shape()
		l, n := view(sh, false)
		var d tensor.Storage
		if dt == tensor.Float32 {
			d = c.Alloc(tensor.Float32, n)
		} else {
			d = c.Alloc(tensor.Int64, n)
		}
		c.Fill(d, l, -3)
		if dt == tensor.Float32 {
			rec("fill", "f32", append([]int64{0}, layoutInts(l)...), F(c.Float32s(d, whole(n))))
		} else {
			rec("fill", "i64", append([]int64{1}, layoutInts(l)...), I(c.Int64s(d, whole(n))))
		}
	}
	// reductions
	for _, sh := range [][]int{{3, 4, 5}, {2, 300}, {300, 3}, {70, 2, 3}, {1}, {4, 1, 6}} {
		for k := range 2 {
			l, n := view(sh, false)
			x := randn(n, 2)
			if k == 1 {
				for i := range x {
					if r.IntN(25) == 0 {
						x[i] = []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))}[r.IntN(3)]
					}
				}
			}
			src := c.FromFloat32s(x)
			for dim := range sh {
				nout := numel(sh) / sh[dim]
				for op := tensor.ReduceSum; op <= tensor.ReduceLogSumExp; op++ {
					ints := append([]int64{int64(op), int64(dim)}, layoutInts(l)...)
					if op == tensor.ReduceArgMax || op == tensor.ReduceArgMin {
						d := c.Alloc(tensor.Int64, nout)
						c.Reduce(op, d, src, l, dim)
						rec("reduce", "arg", ints, F(x), I(c.Int64s(d, whole(nout))))
					} else {
						d := c.Alloc(tensor.Float32, nout)
						c.Reduce(op, d, src, l, dim)
						rec("reduce", "val", ints, F(x), F(c.Float32s(d, whole(nout))))
					}
				}
			}
		}
	}
	// softmax
	for _, rc := range [][2]int{{3, 5}, {4, 300}, {2, 1000}} {
		rows, cols := rc[0], rc[1]
		x := randn(rows*cols, 3)
		for i := range x {
			if r.IntN(8) == 0 {
				x[i] = float32(math.Inf(-1))
			}
		}
		for _, lg := range []bool{false, true} {
			y := c.Alloc(tensor.Float32, rows*cols)
			c.Softmax(y, c.FromFloat32s(x), rows, cols, lg)
			yv := c.Float32s(y, whole(rows*cols))
			g := randn(rows*cols, 1)
			dx := c.Alloc(tensor.Float32, rows*cols)
			c.SoftmaxGrad(dx, c.FromFloat32s(g), c.FromFloat32s(yv), rows, cols, lg)
			li := int64(0)
			if lg {
				li = 1
			}
			rec("softmax", "sm", []int64{int64(rows), int64(cols), li}, F(x), F(yv), F(g), F(c.Float32s(dx, whole(rows*cols))))
		}
	}
	// layer norm
	for _, rc := range [][2]int{{3, 5}, {5, 300}, {300, 7}} {
		rows, cols := rc[0], rc[1]
		x := randn(rows*cols, 2)
		for i := range x {
			x[i] += 5
		}
		wv, bv := randn(cols, 1), randn(cols, 1)
		y, mean, rstd := c.Alloc(tensor.Float32, rows*cols), c.Alloc(tensor.Float32, rows), c.Alloc(tensor.Float32, rows)
		xs := c.FromFloat32s(x)
		c.LayerNorm(y, mean, rstd, xs, c.FromFloat32s(wv), c.FromFloat32s(bv), rows, cols, 1e-5)
		g := randn(rows*cols, 1)
		dw0, db0 := randn(cols, 1), randn(cols, 1)
		dx, dw, db := c.Alloc(tensor.Float32, rows*cols), c.FromFloat32s(dw0), c.FromFloat32s(db0)
		c.LayerNormGrad(dx, dw, db, c.FromFloat32s(g), xs, mean, rstd, c.FromFloat32s(wv), rows, cols)
		rec("layernorm", "ln", []int64{int64(rows), int64(cols)}, F(x), F(wv), F(bv),
			F(c.Float32s(y, whole(rows*cols))), F(c.Float32s(mean, whole(rows))), F(c.Float32s(rstd, whole(rows))),
			F(g), F(dw0), F(db0), F(c.Float32s(dx, whole(rows*cols))), F(c.Float32s(dw, whole(cols))), F(c.Float32s(db, whole(cols))))
	}
	// gather / scatter
	for _, sz := range [][3]int{{5, 7, 3}, {65, 40, 16}} {
		num, n, L := sz[0], sz[1], sz[2]
		idx := make([]int64, n)
		for i := range idx {
			idx[i] = int64(r.IntN(num))
		}
		idx[1] = idx[0]
		tab := randn(num*L, 1)
		out := c.Alloc(tensor.Float32, n*L)
		ix := c.FromInt64s(idx)
		c.Gather(out, c.FromFloat32s(tab), ix, n, L)
		dw0 := randn(num*L, 1)
		src := randn(n*L, 1)
		dw := c.FromFloat32s(dw0)
		c.ScatterAdd(dw, ix, c.FromFloat32s(src), n, L)
		rec("embedding", "emb", []int64{int64(num), int64(n), int64(L)}, I(idx), F(tab), F(c.Float32s(out, whole(n*L))), F(dw0), F(src), F(c.Float32s(dw, whole(num*L))))
	}
	// sort (ties, NaN, both zeros) and the scans
	for _, rc := range [][2]int{{1, 1}, {3, 7}, {4, 300}, {70, 3}} {
		rows, cols := rc[0], rc[1]
		n := rows * cols
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.IntN(9)-4) / 2
			switch r.IntN(12) {
			case 0:
				x[i] = float32(math.NaN())
			case 1:
				x[i] = float32(math.Copysign(0, -1))
			}
		}
		xs := c.FromFloat32s(x)
		for _, desc := range []bool{false, true} {
			vals, idx := c.Alloc(tensor.Float32, n), c.Alloc(tensor.Int64, n)
			c.Sort(vals, idx, xs, rows, cols, desc)
			d := int64(0)
			if desc {
				d = 1
			}
			rec("sort", "sort", []int64{int64(rows), int64(cols), d}, F(x), F(c.Float32s(vals, whole(n))), I(c.Int64s(idx, whole(n))))
		}
		y := randn(n, 1)
		for i := range y {
			y[i] += float32(math.Copysign(0.5, float64(y[i]))) // products of up to 300 stay in range
		}
		ys := c.FromFloat32s(y)
		for _, op := range []tensor.ScanOp{tensor.ScanSum, tensor.ScanProd} {
			for _, rev := range []int64{0, 1} {
				out := c.Alloc(tensor.Float32, n)
				c.Scan(op, out, ys, rows, cols, rev == 1)
				rec("scan", op.String(), []int64{int64(rows), int64(cols), int64(op), rev}, F(y), F(c.Float32s(out, whole(n))))
			}
		}
	}
	// cross entropy
	for _, rc := range [][2]int{{4, 5}, {6, 300}, {3, 2000}} {
		rows, cols := rc[0], rc[1]
		x := randn(rows*cols, 3)
		tg := make([]int64, rows)
		for i := range tg {
			tg[i] = int64(r.IntN(cols))
		}
		tg[0] = -1
		loss := c.Alloc(tensor.Float32, rows)
		xs, ts := c.FromFloat32s(x), c.FromInt64s(tg)
		c.CrossEntropy(loss, xs, ts, rows, cols, -1)
		dx := c.Alloc(tensor.Float32, rows*cols)
		scale := float32(1) / float32(rows)
		c.CrossEntropyGrad(dx, xs, ts, rows, cols, -1, scale)
		rec("ce", "ce", []int64{int64(rows), int64(cols), -1}, F([]float32{scale}), F(x), I(tg), F(c.Float32s(loss, whole(rows))), F(c.Float32s(dx, whole(rows*cols))))
	}
	// adamw
	{
		n := 1000
		p, g, m, v := randn(n, 1), randn(n, 1), randn(n, 0.1), randn(n, 0.1)
		for i := range v {
			v[i] = float32(math.Abs(float64(v[i])))
		}
		cs := tensor.AdamWStep{LR: 1e-3, Beta1: 0.9, Beta2: 0.99, Eps: 1e-8, WeightDecay: 0.1, Step: 3}
		ps, ms, vs := c.FromFloat32s(p), c.FromFloat32s(m), c.FromFloat32s(v)
		c.AdamW(ps, c.FromFloat32s(g), ms, vs, n, cs)
		bc1 := 1 - math.Pow(cs.Beta1, float64(cs.Step))
		bc2 := 1 - math.Pow(cs.Beta2, float64(cs.Step))
		sc := []float32{float32(cs.Beta1), float32(cs.Beta2), float32(1 - cs.Beta1), float32(1 - cs.Beta2), float32(cs.LR / bc1), float32(math.Sqrt(bc2)), float32(1 - cs.LR*cs.WeightDecay), float32(cs.Eps)}
		rec("adamw", "adamw", []int64{int64(n)}, F(sc), F(p), F(g), F(m), F(v), F(c.Float32s(ps, whole(n))), F(c.Float32s(ms, whole(n))), F(c.Float32s(vs, whole(n))))
	}
	// attention softmax: scores per head from the CPU's Attention (p) with
	// S computed here; dS from the reference formula
	for _, sh := range [][4]int{{2, 5, 3, 4}, {1, 40, 2, 8}} {
		b, t, nh, hs := sh[0], sh[1], sh[2], sh[3]
		cc := nh * hs
		for _, causal := range []bool{true, false} {
			qkv := randn(b*t*3*cc, 1)
			type ab interface {
				Attention(y, p, qkv tensor.Storage, b, t, nh, hs int, causal bool)
			}
			y, pr := c.Alloc(tensor.Float32, b*t*cc), c.Alloc(tensor.Float32, b*nh*t*t)
			c.(ab).Attention(y, pr, c.FromFloat32s(qkv), b, t, nh, hs, causal)
			pv := c.Float32s(pr, whole(b*nh*t*t))
			S := make([]float32, b*nh*t*t)
			for bi := range b {
				for h := range nh {
					for i := range t {
						for j := range t {
							var s float32
							for d := range hs {
								s += qkv[bi*t*3*cc+i*3*cc+h*hs+d] * qkv[bi*t*3*cc+j*3*cc+cc+h*hs+d]
							}
							S[((bi*nh+h)*t+i)*t+j] = s
						}
					}
				}
			}
			scale := float32(1 / math.Sqrt(float64(hs)))
			dp := randn(b*nh*t*t, 1)
			ds := make([]float32, len(dp))
			for row := range b * nh * t {
				i := row % t
				n := t
				if causal {
					n = i + 1
				}
				var dot float32
				for j := range n {
					dot += pv[row*t+j] * dp[row*t+j]
				}
				for j := range n {
					ds[row*t+j] = pv[row*t+j] * (dp[row*t+j] - dot) * scale
				}
			}
			ci := int64(0)
			if causal {
				ci = 1
			}
			rec("attn", "attn", []int64{int64(b * nh * t), int64(t), ci}, F([]float32{scale}), F(S), F(pv), F(dp), F(ds))
		}
	}
	// random
	{
		n := 1001
		seed, offset := uint64(0x1234_5678_9abc_def0), uint64(7)
		u, z, m := make([]float32, n), make([]float32, n), make([]float32, n)
		for i := range n {
			wv := philox.Group(uint64(i/4), seed, offset)
			u[i] = float32(wv[i%4]>>8) / (1 << 24)
			m[i] = 1 / (1 - float32(0.25))
			if u[i] < 0.25 {
				m[i] = 0
			}
			p := i % 4 / 2
			u1 := float64(wv[2*p]>>8+1) / (1 << 24)
			u2 := float64(wv[2*p+1]>>8) / (1 << 24)
			rad := math.Sqrt(-2 * math.Log(u1))
			if i%2 == 0 {
				z[i] = float32(rad * math.Cos(2*math.Pi*u2))
			} else {
				z[i] = float32(rad * math.Sin(2*math.Pi*u2))
			}
		}
		rec("random", "philox", []int64{int64(n), int64(seed), int64(offset)}, F(u), F(z), F(m))
	}
}

// writeHalfCases writes the cases of the bfloat16 and float16 kernels: the
// casts (every bit pattern to float32; float32 values, ties and specials
// to 16 bits), and the unary and binary ops on strided 16-bit views, with
// the CPU backend's results (16-bit inputs and outputs are written as
// their exact float32 values).
func writeHalfCases() {
	c16 := c.(tensor.Backend16)
	for code, dt := range []tensor.DType{tensor.BFloat16, tensor.Float16} {
		from, to := tensor.BF16FromFloat32, tensor.BF16ToFloat32
		if dt == tensor.Float16 {
			from, to = tensor.F16FromFloat32, tensor.F16ToFloat32
		}
		all := make([]int64, 1<<16)
		wide := make([]float32, 1<<16)
		for i := range all {
			all[i] = int64(i)
			wide[i] = to(uint16(i))
		}
		var xs []float32
		for range 3000 {
			h := uint16(r.Uint32())
			lo, hi := to(h), to(h+1)
			xs = append(xs, float32((float64(lo)+float64(hi))/2), math.Float32frombits(r.Uint32()))
		}
		xs = append(xs, 0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
			math.Float32frombits(0x7FC00001), math.Float32frombits(0xFF800001), 65519.996, 65520, 0x1p-149, 0x1p-25, 0x1.8p-25, 3.3961775e38)
		bits := make([]int64, len(xs))
		for i, x := range xs {
			bits[i] = int64(from(x))
		}
		rec("cast16", dt.String(), []int64{int64(code)}, I(all), F(wide), F(xs), I(bits))

		round := func(x []float32) (tensor.Storage, []float32) {
			h := make([]uint16, len(x))
			f := make([]float32, len(x))
			for i, v := range x {
				h[i] = from(v)
				f[i] = to(h[i])
			}
			return c16.FromBits16(dt, h), f
		}
		for op := tensor.OpNeg; op <= tensor.OpSquare; op++ {
			sh := shape()
			l, n := view(sh, r.IntN(2) == 0)
			x := randn(n, 2)
			if op == tensor.OpLog || op == tensor.OpSqrt || op == tensor.OpRsqrt || op == tensor.OpPowScalar {
				for i := range x {
					x[i] = float32(math.Abs(float64(x[i]))) + 0.01
				}
			}
			p := tensor.UnaryParams{A: 1.5, B: 2}
			if op == tensor.OpClamp {
				p.A = -0.5
			}
			src, xr := round(x)
			dst := c.Alloc(dt, numel(sh))
			c.Unary(op, p, dst, src, l)
			rec("unary16", op.String(), append([]int64{int64(code), int64(op)}, layoutInts(l)...), F([]float32{p.A, p.B}), F(xr), F(c.Float32s(dst, whole(numel(sh)))))
		}
		for _, op := range tensor.BinaryOps() {
			sh := shape()
			la, na := view(sh, true)
			lb, nb := view(sh, true)
			a, b := randn(na, 2), randn(nb, 2)
			if op == tensor.OpPow {
				for i := range a {
					a[i] = float32(math.Abs(float64(a[i]))) + 0.1
				}
			}
			sa, ar := round(a)
			sb, br := round(b)
			out := dt
			if op.IsComparison() {
				out = tensor.Float32
			}
			dst := c.Alloc(out, numel(sh))
			c.Binary(op, dst, sa, la, sb, lb)
			isCmp := int64(0)
			if op.IsComparison() {
				isCmp = 1
			}
			ints := append([]int64{int64(code), int64(op), isCmp}, layoutInts(la)...)
			ints = append(ints, layoutInts(lb)...)
			rec("binary16", op.String(), ints, F(ar), F(br), F(c.Float32s(dst, whole(numel(sh)))))
		}
	}
}
