package backendtest

import (
	"fmt"
	"math"
	"testing"

	"github.com/wickml/wick/tensor"
)

// testCopy copies between every pair of dtypes, from contiguous, strided
// and broadcast views into contiguous and strided ones; the elements of
// the destination outside its view keep their poison.
func testCopy(t testing.TB, b tensor.Backend) {
	r := NewRand(t)
	for _, dts := range [][2]tensor.DType{{tensor.Float32, tensor.Float32}, {tensor.Int64, tensor.Int64}, {tensor.Float32, tensor.Int64}, {tensor.Int64, tensor.Float32}} {
		dstDT, srcDT := dts[0], dts[1]
		for _, kd := range []int{contig, strided} {
			for _, ks := range viewKinds {
				shape := randomShape(r, 5, 6)
				if kd == contig && ks == contig {
					shape = []int{70000} // a plain memcpy for equal dtypes
				}
				vd, vs := makeView(r, shape, kd), makeView(r, shape, ks)
				name := fmt.Sprintf("Copy %s←%s/%v←%v", dstDT, srcDT, vd, vs)
				// the expected destination storage, as float64 or int64
				wantF := make([]float32, vd.n)
				wantI := make([]int64, vd.n)
				for i := range wantF {
					wantF[i], wantI[i] = float32(math.NaN()), -7777777
				}
				var src tensor.Storage
				var xf []float32
				var xi []int64
				if srcDT == tensor.Float32 {
					xf = randn(r, vs.n)
					for i := range xf {
						xf[i] *= 1000
					}
					src = b.FromFloat32s(xf)
				} else {
					xi = make([]int64, vs.n)
					for i := range xi {
						xi[i] = r.Int64N(1<<40) - 1<<39
					}
					src = b.FromInt64s(xi)
				}
				so := vs.l.Offsets()
				for k, o := range vd.l.Offsets() {
					switch {
					case srcDT == tensor.Float32 && dstDT == tensor.Float32:
						wantF[o] = xf[so[k]]
					case srcDT == tensor.Float32:
						wantI[o] = tensor.ToInt64(float64(xf[so[k]]))
					case dstDT == tensor.Float32:
						wantF[o] = float32(xi[so[k]])
					default:
						wantI[o] = xi[so[k]]
					}
				}
				dst := poisoned(b, dstDT, vd.n)
				b.Copy(dst, vd.l, src, vs.l)
				if dstDT == tensor.Float32 {
					checkExact(t, name, read(b, dst), wantF)
				} else {
					checkInts(t, name, readInts(b, dst), wantI)
				}
			}
		}
	}
}

// testCopyOverlapping copies between overlapping views of one storage
// (shifted contiguous and strided slices, a matrix into its own transpose,
// a view onto itself; float32 and int64): the result must be as if the
// source were read in full first.
func testCopyOverlapping(t testing.TB, b tensor.Backend) {
	r := NewRand(t)
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
			var s tensor.Storage
			if dt == tensor.Float32 {
				s = b.FromFloat32s(data)
			} else {
				s = b.FromInt64s(ints)
			}
			// the expected storage: src read in full, then written
			want := make([]int64, n)
			for i := range want {
				want[i] = int64(i)
			}
			srcIdx := cs.sl.Offsets()
			for k, o := range cs.dl.Offsets() {
				want[o] = int64(srcIdx[k])
			}
			b.Copy(s, cs.dl, s, cs.sl)
			if dt == tensor.Float32 {
				w := make([]float32, n)
				for i, k := range want {
					w[i] = data[k]
				}
				checkExact(t, name, read(b, s), w)
			} else {
				checkInts(t, name, readInts(b, s), want)
			}
		}
	}
}

// testCastSpecialValues converts NaN, ±Inf, out-of-range and ordinary
// floats to int64 (a contiguous and a strided view, and Fill of an int64
// view) and checks the results against tensor.ToInt64, the rule every
// backend follows (PyTorch's CPU result: tensor/cast_test.go).
func testCastSpecialValues(t testing.TB, b tensor.Backend) {
	vals := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 1e19, -1e19, 0x1p63, -0x1p63,
		9.2233715e18, -9.2233715e18, 3.7, -3.7, 0.5, -0.5, 0, 16777217, float32(math.Copysign(0, -1))}
	n := len(vals)
	want := make([]int64, n)
	for i, v := range vals {
		want[i] = tensor.ToInt64(float64(v))
	}
	src := b.FromFloat32s(vals)
	for _, l := range []tensor.Layout{whole(n), {Shape: []int{n / 2}, Strides: []int{2}, Offset: 1}} {
		m := numel(l.Shape)
		dst := poisoned(b, tensor.Int64, m)
		b.Copy(dst, whole(m), src, l)
		checkInts(t, fmt.Sprintf("Copy int64←float32 of %v", l), readInts(b, dst), gatherView(want, l))
	}
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), 1e300, -3.9} {
		dst := poisoned(b, tensor.Int64, 6)
		b.Fill(dst, tensor.Layout{Shape: []int{3}, Strides: []int{2}}, v) // not contiguous
		w := tensor.ToInt64(v)
		checkInts(t, fmt.Sprintf("Fill int64 with %v", v), readInts(b, dst), []int64{w, -7777777, w, -7777777, w, -7777777})
	}
}

func testFill(t testing.TB, b tensor.Backend) {
	r := NewRand(t)
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Int64} {
		for _, kind := range []int{contig, strided} {
			for _, v := range []float64{0, 2.5, -3, math.Inf(1)} {
				if dt == tensor.Int64 && math.IsInf(v, 0) {
					continue
				}
				vd := makeView(r, randomShape(r, 4, 9), kind)
				dst := poisoned(b, dt, vd.n)
				b.Fill(dst, vd.l, v)
				name := fmt.Sprintf("Fill %s %v/%v", dt, v, vd)
				if dt == tensor.Float32 {
					want := make([]float32, vd.n)
					for i := range want {
						want[i] = float32(math.NaN())
					}
					for _, o := range vd.l.Offsets() {
						want[o] = float32(v)
					}
					checkExact(t, name, read(b, dst), want)
				} else {
					want := make([]int64, vd.n)
					for i := range want {
						want[i] = -7777777
					}
					for _, o := range vd.l.Offsets() {
						want[o] = int64(v)
					}
					checkInts(t, name, readInts(b, dst), want)
				}
			}
		}
	}
}

// testHostReads checks Float32s and Int64s of strided and broadcast views
// and of empty ones.
func testHostReads(t testing.TB, b tensor.Backend) {
	r := NewRand(t)
	for _, kind := range viewKinds {
		v := makeView(r, randomShape(r, 4, 7), kind)
		x := randn(r, v.n)
		checkExact(t, fmt.Sprintf("Float32s/%v", v), b.Float32s(b.FromFloat32s(x), v.l), gatherView(x, v.l))
		ints := make([]int64, v.n)
		for i := range ints {
			ints[i] = r.Int64()
		}
		checkInts(t, fmt.Sprintf("Int64s/%v", v), b.Int64s(b.FromInt64s(ints), v.l), gatherView(ints, v.l))
	}
	empty := tensor.Layout{Shape: []int{0, 3}, Strides: []int{3, 1}}
	if got := b.Float32s(b.Alloc(tensor.Float32, 0), empty); len(got) != 0 {
		t.Errorf("Float32s of an empty view: got %d values", len(got))
	}
	if got := b.Int64s(b.Alloc(tensor.Int64, 0), empty); len(got) != 0 {
		t.Errorf("Int64s of an empty view: got %d values", len(got))
	}
}

// testAllocZeroes checks that Alloc returns zeros, also after a storage
// that held other values was released (for backends whose storages have a
// Release method, which may hand the memory to the next Alloc).
func testAllocZeroes(t testing.TB, b tensor.Backend) {
	for _, n := range []int{1, 1000, 300000} {
		s := b.Alloc(tensor.Float32, n)
		b.Fill(s, whole(n), 7)
		if rel, ok := s.(interface{ Release() }); ok {
			rel.Release()
		}
		for i, v := range read(b, b.Alloc(tensor.Float32, n)) {
			if v != 0 {
				t.Fatalf("Alloc(float32, %d) after reuse: element %d is %v, want 0", n, i, v)
			}
		}
		for i, v := range readInts(b, b.Alloc(tensor.Int64, n)) {
			if v != 0 {
				t.Fatalf("Alloc(int64, %d): element %d is %v, want 0", n, i, v)
			}
		}
	}
}
