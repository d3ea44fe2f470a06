//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"testing"

	"github.com/wickml/wick/tensor"
)

func TestCopy(t *testing.T) {
	g, c := gpu(t)
	r := newRNG(t)
	for _, pairDT := range [][2]tensor.DType{{tensor.Float32, tensor.Float32}, {tensor.Int64, tensor.Int64}, {tensor.Float32, tensor.Int64}, {tensor.Int64, tensor.Float32}} {
		dstDT, srcDT := pairDT[0], pairDT[1]
		for _, kd := range []int{contig, strided} {
			for _, ks := range viewKinds {
				shape := randomShape(r, 5, 6)
				if kd == contig && ks == contig {
					shape = []int{70000} // the memcpy path for equal dtypes
				}
				vd, vs := makeView(r, shape, kd), makeView(r, shape, ks)
				name := fmt.Sprintf("Copy %s←%s/%v←%v", dstDT, srcDT, vd, vs)
				var src pair
				if srcDT == tensor.Float32 {
					x := randn(r, vs.n)
					for i := range x {
						x[i] *= 1000
					}
					src = upload(g, c, x)
				} else {
					x := make([]int64, vs.n)
					for i := range x {
						x[i] = r.Int64N(1<<40) - 1<<39
					}
					src = uploadInts(g, c, x)
				}
				dst := poisoned(g, c, dstDT, vd.n) // elements outside the view keep the poison
				g.Copy(dst.g, vd.l, src.g, vs.l)
				c.Copy(dst.c, vd.l, src.c, vs.l)
				if dstDT == tensor.Float32 {
					gv, cv := dst.read(g, c)
					compare(t, name, gv, cv, tol{0, 0})
				} else {
					gv, cv := dst.readInts(g, c)
					compareInts(t, name, gv, cv)
				}
			}
		}
	}
}

func TestFill(t *testing.T) {
	g, c := gpu(t)
	r := newRNG(t)
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Int64} {
		for _, kind := range []int{contig, strided} {
			for _, v := range []float64{0, 2.5, -3, math.Inf(1)} {
				if dt == tensor.Int64 && math.IsInf(v, 0) {
					continue
				}
				shape := randomShape(r, 4, 9)
				vd := makeView(r, shape, kind)
				dst := poisoned(g, c, dt, vd.n)
				g.Fill(dst.g, vd.l, v)
				c.Fill(dst.c, vd.l, v)
				name := fmt.Sprintf("Fill %s %v/%v", dt, v, vd)
				if dt == tensor.Float32 {
					gv, cv := dst.read(g, c)
					compare(t, name, gv, cv, tol{0, 0})
				} else {
					gv, cv := dst.readInts(g, c)
					compareInts(t, name, gv, cv)
				}
			}
		}
	}
}

// TestHostReads checks Float32s and Int64s of strided views (copied to a
// dense buffer on the device first) and of empty ones.
func TestHostReads(t *testing.T) {
	g, c := gpu(t)
	r := newRNG(t)
	for _, kind := range viewKinds {
		shape := randomShape(r, 4, 7)
		v := makeView(r, shape, kind)
		x := upload(g, c, randn(r, v.n))
		compare(t, fmt.Sprintf("Float32s/%v", v), g.Float32s(x.g, v.l), c.Float32s(x.c, v.l), tol{0, 0})
		ints := make([]int64, v.n)
		for i := range ints {
			ints[i] = r.Int64()
		}
		xi := uploadInts(g, c, ints)
		compareInts(t, fmt.Sprintf("Int64s/%v", v), g.Int64s(xi.g, v.l), c.Int64s(xi.c, v.l))
	}
	empty := tensor.Layout{Shape: []int{0, 3}, Strides: []int{3, 1}}
	if got := g.Float32s(g.Alloc(tensor.Float32, 0), empty); len(got) != 0 {
		t.Errorf("Float32s of an empty view: got %d values", len(got))
	}
}

// TestAllocZeroes checks that Alloc returns zeros even when it reuses a
// cached block that held other values.
func TestAllocZeroes(t *testing.T) {
	g, _ := gpu(t)
	for _, n := range []int{1, 1000, 300000} {
		s := g.Alloc(tensor.Float32, n)
		g.Fill(s, whole(n), 7)
		s.(interface{ Release() }).Release()
		s2 := g.Alloc(tensor.Float32, n)
		for i, v := range g.Float32s(s2, whole(n)) {
			if v != 0 {
				t.Fatalf("Alloc(%d) after reuse: element %d is %v, want 0", n, i, v)
			}
		}
		si := g.Alloc(tensor.Int64, n)
		for i, v := range g.Int64s(si, whole(n)) {
			if v != 0 {
				t.Fatalf("Alloc(int64, %d): element %d is %v, want 0", n, i, v)
			}
		}
	}
}

// TestCastSpecialValues converts NaN, ±Inf, out-of-range and ordinary
// floats to int64 on the GPU (the memcpy-free cast kernel on a contiguous
// and a strided view, and Fill of an int64 view) and checks the result
// against tensor.ToInt64, the CPU backend's rule (PyTorch's CPU result:
// tensor/cast_test.go), and against the CPU backend.
func TestCastSpecialValues(t *testing.T) {
	g, c := gpu(t)
	vals := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 1e19, -1e19, 0x1p63, -0x1p63,
		9.2233715e18, -9.2233715e18, 3.7, -3.7, 0.5, -0.5, 0, 16777217, float32(math.Copysign(0, -1))}
	n := len(vals)
	want := make([]int64, n)
	for i, v := range vals {
		want[i] = tensor.ToInt64(float64(v))
	}
	src := upload(g, c, vals)
	for _, l := range []tensor.Layout{whole(n), {Shape: []int{n / 2}, Strides: []int{2}, Offset: 1}} {
		name := fmt.Sprintf("Copy int64←float32 of %v", l)
		dst := poisoned(g, c, tensor.Int64, numel(l.Shape))
		dl := whole(numel(l.Shape))
		g.Copy(dst.g, dl, src.g, l)
		c.Copy(dst.c, dl, src.c, l)
		gv, cv := dst.readInts(g, c)
		w := want
		if l.Offset == 1 {
			w = make([]int64, n/2)
			for i := range w {
				w[i] = want[1+2*i]
			}
		}
		compareInts(t, name+" (GPU)", gv, w)
		compareInts(t, name+" (CPU)", cv, w)
	}
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), 1e300, -3.9} {
		dst := poisoned(g, c, tensor.Int64, 6)
		l := tensor.Layout{Shape: []int{3}, Strides: []int{2}} // not contiguous: the fill kernel
		g.Fill(dst.g, l, v)
		c.Fill(dst.c, l, v)
		gv, cv := dst.readInts(g, c)
		compareInts(t, fmt.Sprintf("Fill int64 with %v", v), gv, cv)
		if gv[0] != tensor.ToInt64(v) {
			t.Errorf("Fill int64 with %v: got %d, want %d", v, gv[0], tensor.ToInt64(v))
		}
	}
}

// TestCopyOverlapping copies between overlapping views of one storage
// (shifted contiguous and strided slices, a matrix into its own
// transpose, a view onto itself; float32 and int64): the result must be as if the source were read in full first,
// on the GPU (where the driver's copy and the copy kernels are undefined
// for overlapping ranges) as on the CPU.
func TestCopyOverlapping(t *testing.T) {
	g, c := gpu(t)
	r := newRNG(t)
	const n = 100000
	lay := func(off int, shape, strides []int) tensor.Layout {
		return tensor.Layout{Shape: shape, Strides: strides, Offset: off}
	}
	cases := []struct {
		name   string
		dl, sl tensor.Layout
	}{
		{"contiguous, forward by 1", lay(1, []int{n - 1}, []int{1}), lay(0, []int{n - 1}, []int{1})},
		{"contiguous, backward by 1", lay(0, []int{n - 1}, []int{1}), lay(1, []int{n - 1}, []int{1})},
		{"contiguous, forward by 999", lay(999, []int{n - 999}, []int{1}), lay(0, []int{n - 999}, []int{1})},
		{"rows into their transpose", lay(0, []int{300, 300}, []int{300, 1}), lay(0, []int{300, 300}, []int{1, 300})},
		{"strided, forward by 2", lay(2, []int{n/2 - 1}, []int{2}), lay(0, []int{n/2 - 1}, []int{2})},
		{"onto itself", lay(5, []int{10, 10}, []int{10, 1}), lay(5, []int{10, 10}, []int{10, 1})},
	}
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Int64} {
		for _, cs := range cases {
			name := fmt.Sprintf("%s %s", dt, cs.name)
			data := randn(r, n)
			ints := make([]int64, n)
			for i := range ints {
				ints[i] = int64(i)
			}
			var p pair
			if dt == tensor.Float32 {
				p = upload(g, c, data)
			} else {
				p = uploadInts(g, c, ints)
			}
			// the expected storage: src read in full, then written
			want := make([]int64, n)
			for i := range want {
				want[i] = int64(i)
			}
			srcIdx := offsets(cs.sl)
			for k, o := range offsets(cs.dl) {
				want[o] = int64(srcIdx[k])
			}
			g.Copy(p.g, cs.dl, p.g, cs.sl)
			c.Copy(p.c, cs.dl, p.c, cs.sl)
			if dt == tensor.Float32 {
				gv, cv := p.read(g, c)
				w := make([]float32, n)
				for i, k := range want {
					w[i] = data[k]
				}
				compare(t, name+" (GPU)", gv, w, tol{0, 0})
				compare(t, name+" (CPU)", cv, w, tol{0, 0})
			} else {
				gv, cv := p.readInts(g, c)
				compareInts(t, name+" (GPU)", gv, want)
				compareInts(t, name+" (CPU)", cv, want)
			}
		}
	}
}

// offsets returns the storage offset of each element of l in row-major
// order.
func offsets(l tensor.Layout) []int {
	out := make([]int, 0, numel(l.Shape))
	idx := make([]int, len(l.Shape))
	for range numel(l.Shape) {
		o := l.Offset
		for d, i := range idx {
			o += i * l.Strides[d]
		}
		out = append(out, o)
		for d := len(idx) - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < l.Shape[d] {
				break
			}
			idx[d] = 0
		}
	}
	return out
}

// TestUploadStaged uploads more than the two pinned staging buffers hold
// (several pieces, each buffer reused), overwrites the host slice as soon
// as the upload returns, and reads the original values back. (The emulated
// driver also rejects an asynchronous upload from memory that is not
// pinned, so every upload of the suite goes through the staging buffers.)
func TestUploadStaged(t *testing.T) {
	g, _ := gpu(t)
	r := newRNG(t)
	for _, n := range []int{1, stagingBytes / 4, stagingBytes/4 + 1, 3*stagingBytes/4 + 12345} {
		x := randn(r, n)
		want := append([]float32{}, x...)
		s := g.FromFloat32s(x)
		for i := range x {
			x[i] = -1
		}
		got := g.Float32s(s, whole(n))
		compare(t, fmt.Sprintf("upload of %d floats", n), got, want, tol{0, 0})
	}
}

// TestUploadConcurrent uploads from several goroutines at once through the
// device's shared staging buffers (run it under -race) and reads each
// upload back.
func TestUploadConcurrent(t *testing.T) {
	g, _ := gpu(t)
	r := newRNG(t)
	const workers = 4
	data := make([][]float32, workers)
	for w := range data {
		data[w] = randn(r, stagingBytes/4+1000*w+1) // two pieces each
	}
	errs := make(chan error, workers)
	for w := range workers {
		go func() {
			for range 3 {
				s := g.FromFloat32s(data[w])
				got := g.Float32s(s, whole(len(data[w])))
				for i, v := range got {
					if v != data[w][i] {
						errs <- fmt.Errorf("worker %d: element %d: got %v, want %v", w, i, v, data[w][i])
						return
					}
				}
			}
			errs <- nil
		}()
	}
	for range workers {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
