package backendtest

import (
	"fmt"
	"math"
	"testing"

	"github.com/wickml/wick/tensor"
)

// The fused kernels of the Llama family's layers (tensor.RMSNormer,
// tensor.Rotator, tensor.SwiGLUer, tensor.GroupedAttention) against
// float64 references, forward and backward.

// testRMSNorm checks RMSNorm and RMSNormGrad (dx, and dw added to what is
// there) with and without a weight, on rows from one element to 50,257.
func testRMSNorm(t testing.TB, b tensor.Backend) {
	rn, ok := b.(tensor.RMSNormer)
	if !ok {
		t.Logf("%s does not implement tensor.RMSNormer: nothing to check", b.Device())
		return
	}
	r := NewRand(t)
	const eps = 1e-6
	for _, rc := range [][2]int{{1, 1}, {3, 5}, {7, 256}, {33, 576}, {2, 50257}, {3000, 3}} {
		rows, cols := rc[0], rc[1]
		n := rows * cols
		x, g := randn(r, n), randn(r, n)
		for i := range x {
			x[i] = x[i]*3 + 0.5
		}
		xs, gs := b.FromFloat32s(x), b.FromFloat32s(g)
		for _, weighted := range []bool{false, true} {
			name := fmt.Sprintf("RMSNorm %dx%d weight=%v", rows, cols, weighted)
			var w []float32
			var ws tensor.Storage
			if weighted {
				w = randn(r, cols)
				ws = b.FromFloat32s(w)
			}
			wj := func(j int) float64 {
				if w == nil {
					return 1
				}
				return float64(w[j])
			}
			y, rs := poisoned(b, tensor.Float32, n), poisoned(b, tensor.Float32, rows)
			rn.RMSNorm(y, rs, xs, ws, rows, cols, eps)
			inv := make([]float64, rows)
			wantR, allowR := make([]float64, rows), make([]float64, rows)
			wantY, allowY := make([]float64, n), make([]float64, n)
			for i := range rows {
				var ss float64
				for _, v := range x[i*cols : (i+1)*cols] {
					ss += float64(v) * float64(v)
				}
				inv[i] = 1 / math.Sqrt(ss/float64(cols)+eps)
				wantR[i], allowR[i] = inv[i], (elemRel+float64Err(cols))*inv[i]
				for j := range cols {
					o := i*cols + j
					wantY[o] = wj(j) * float64(x[o]) * inv[i]
					allowY[o] = (elemRel + 4*u) * math.Abs(wantY[o])
				}
			}
			checkBound(t, name+" rstd", read(b, rs), wantR, allowR)
			checkBound(t, name+" y", read(b, y), wantY, allowY)

			// backward from the reference's rstd, dw starting at 1
			r32 := round32(wantR)
			dx, dw := poisoned(b, tensor.Float32, n), poisoned(b, tensor.Float32, cols)
			b.Fill(dw, whole(cols), 1)
			if !weighted {
				dw = nil
			}
			rn.RMSNormGrad(dx, dw, gs, xs, b.FromFloat32s(r32), ws, rows, cols)
			wantX, allowX := make([]float64, n), make([]float64, n)
			wantW, allowW := make([]float64, cols), make([]float64, cols)
			for j := range wantW {
				wantW[j] = 1
			}
			for i := range rows {
				ri := float64(r32[i])
				var dot, dotAbs float64
				for j := range cols {
					o := i*cols + j
					dot += float64(g[o]) * wj(j) * float64(x[o])
					dotAbs += math.Abs(float64(g[o]) * wj(j) * float64(x[o]))
				}
				c := ri * ri * ri / float64(cols)
				for j := range cols {
					o := i*cols + j
					a := ri * float64(g[o]) * wj(j)
					wantX[o] = a - float64(x[o])*c*dot
					allowX[o] = elemRel*(math.Abs(a)+math.Abs(float64(x[o])*c*dot)) + float64Err(cols)*math.Abs(float64(x[o]))*c*dotAbs
					gx := float64(g[o]) * float64(x[o]) * ri
					wantW[j] += gx
					allowW[j] += elemRel * math.Abs(gx)
				}
			}
			for j := range allowW {
				allowW[j] += u * math.Abs(wantW[j])
			}
			checkBound(t, name+" dx", read(b, dx), wantX, allowX)
			if weighted {
				checkBound(t, name+" dw", read(b, dw), wantW, allowW)
			}
		}
	}
	// dw only
	rows, cols := 513, 64
	x, g := randn(r, rows*cols), randn(r, rows*cols)
	rstd := randIn(r, rows, 0.5, 2)
	dw := poisoned(b, tensor.Float32, cols)
	b.Fill(dw, whole(cols), 0)
	rn.RMSNormGrad(nil, dw, b.FromFloat32s(g), b.FromFloat32s(x), b.FromFloat32s(rstd), b.FromFloat32s(randn(r, cols)), rows, cols)
	want, allowed := make([]float64, cols), make([]float64, cols)
	for o := range x {
		gx := float64(g[o]) * float64(x[o]) * float64(rstd[o/cols])
		want[o%cols] += gx
		allowed[o%cols] += elemRel * math.Abs(gx)
	}
	checkBound(t, "RMSNormGrad dw only", read(b, dw), want, allowed)
}

// testRotary checks Rotary and its transpose on heads read through
// strides: [A, H, T, D] views of [A, T, H, D] storages (how attention
// layers pass heads) at an offset, and contiguous ones.
func testRotary(t testing.TB, b tensor.Backend) {
	ro, ok := b.(tensor.Rotator)
	if !ok {
		t.Logf("%s does not implement tensor.Rotator: nothing to check", b.Device())
		return
	}
	r := NewRand(t)
	for _, sh := range [][4]int{{1, 1, 1, 2}, {2, 3, 5, 8}, {3, 4, 17, 64}, {1, 9, 33, 6}} {
		a, h, tt, d := sh[0], sh[1], sh[2], sh[3]
		half := d / 2
		cos, sin := randIn(r, tt*d, -1, 1), randIn(r, tt*d, -1, 1)
		cs, ss := b.FromFloat32s(cos), b.FromFloat32s(sin)
		for _, strided := range []bool{false, true} {
			const off = 3
			data := randn(r, off+a*h*tt*d)
			l := tensor.Layout{Shape: []int{a, h, tt, d}, Strides: []int{h * tt * d, tt * d, d, 1}, Offset: off}
			if strided {
				l.Strides = []int{tt * h * d, d, h * d, 1}
			}
			xs := b.FromFloat32s(data)
			for _, transpose := range []bool{false, true} {
				name := fmt.Sprintf("Rotary %v strided=%v transpose=%v", sh, strided, transpose)
				y := poisoned(b, tensor.Float32, a*h*tt*d)
				ro.Rotary(y, xs, l, cs, ss, transpose)
				want, allowed := make([]float64, a*h*tt*d), make([]float64, a*h*tt*d)
				for ai := range a {
					for hi := range h {
						for ti := range tt {
							base := off + ai*l.Strides[0] + hi*l.Strides[1] + ti*l.Strides[2]
							row := ((ai*h+hi)*tt + ti) * d
							c, s := cos[ti*d:], sin[ti*d:]
							for i := range half {
								x1, x2 := float64(data[base+i]), float64(data[base+i+half])
								var p1, q1, p2, q2 float64
								if transpose {
									p1, q1 = x1*float64(c[i]), x2*float64(s[i+half])
									p2, q2 = x2*float64(c[i+half]), -x1*float64(s[i])
								} else {
									p1, q1 = x1*float64(c[i]), -x2*float64(s[i])
									p2, q2 = x2*float64(c[i+half]), x1*float64(s[i+half])
								}
								want[row+i], allowed[row+i] = p1+q1, elemRel*(math.Abs(p1)+math.Abs(q1))
								want[row+i+half], allowed[row+i+half] = p2+q2, elemRel*(math.Abs(p2)+math.Abs(q2))
							}
						}
					}
				}
				checkBound(t, name, read(b, y), want, allowed)
			}
		}
	}
}

// testSwiGLU checks SwiGLU and SwiGLUGrad (both gradients, and each
// alone) over values from −100 to 100.
func testSwiGLU(t testing.TB, b tensor.Backend) {
	sw, ok := b.(tensor.SwiGLUer)
	if !ok {
		t.Logf("%s does not implement tensor.SwiGLUer: nothing to check", b.Device())
		return
	}
	r := NewRand(t)
	for _, n := range []int{1, 7, 1000, 100003} {
		gate, up, g := randn(r, n), randn(r, n), randn(r, n)
		for i := range gate {
			gate[i] *= 4
		}
		if n >= 7 {
			copy(gate, []float32{-100, 100, -20, 20, 0, -1.2784645, 88})
		}
		gs, us, dys := b.FromFloat32s(gate), b.FromFloat32s(up), b.FromFloat32s(g)
		y := poisoned(b, tensor.Float32, n)
		sw.SwiGLU(y, gs, us, n)
		wy, ay := make([]float64, n), make([]float64, n)
		wa, aa := make([]float64, n), make([]float64, n)
		wu, au := make([]float64, n), make([]float64, n)
		for i := range n {
			x := float64(gate[i])
			s := 1 / (1 + math.Exp(-x))
			wy[i] = x * s * float64(up[i])
			ay[i] = elemRel*math.Abs(wy[i]) + 0x1p-126
			base := float64(g[i]) * float64(up[i]) * s
			wa[i] = base * (1 + x*(1-s))
			aa[i] = elemRel*math.Abs(base)*(1+math.Abs(x*(1-s))) + 0x1p-126
			wu[i] = float64(g[i]) * x * s
			au[i] = elemRel*math.Abs(wu[i]) + 0x1p-126
		}
		name := fmt.Sprintf("SwiGLU n=%d", n)
		checkBound(t, name+" y", read(b, y), wy, ay)
		da, du := poisoned(b, tensor.Float32, n), poisoned(b, tensor.Float32, n)
		sw.SwiGLUGrad(da, du, dys, gs, us, n)
		checkBound(t, name+" dgate", read(b, da), wa, aa)
		checkBound(t, name+" dup", read(b, du), wu, au)
		da, du = poisoned(b, tensor.Float32, n), poisoned(b, tensor.Float32, n)
		sw.SwiGLUGrad(da, nil, dys, gs, us, n)
		checkBound(t, name+" dgate alone", read(b, da), wa, aa)
		sw.SwiGLUGrad(nil, du, dys, gs, us, n)
		checkBound(t, name+" dup alone", read(b, du), wu, au)
	}
}

// gqaRef is causal grouped-query attention in float64 (see
// tensor.GroupedAttention) with each element's bound, as attentionRef
// bounds the packed attention.
func gqaRef(q, k, v []float32, bs, h, hkv, tt, s, d, offset int) (y, ay, p, ap []float64) {
	g := h / hkv
	scale := float64(float32(1 / math.Sqrt(float64(d))))
	y, ay = make([]float64, bs*h*tt*d), make([]float64, bs*h*tt*d)
	p, ap = make([]float64, bs*h*tt*s), make([]float64, bs*h*tt*s)
	for bi := range bs {
		for hi := range h {
			qb := ((bi*h + hi) * tt) * d
			kb := ((bi*hkv + hi/g) * s) * d
			for i := range tt {
				n := min(s, offset+i+1)
				sc, sabs := make([]float64, n), make([]float64, n)
				m := math.Inf(-1)
				for j := range n {
					for e := range d {
						prod := float64(q[qb+i*d+e]) * float64(k[kb+j*d+e])
						sc[j] += prod
						sabs[j] += math.Abs(prod)
					}
					sc[j] *= scale
					sabs[j] *= scale
					m = math.Max(m, sc[j])
				}
				var sum float64
				for j := range n {
					sum += math.Exp(sc[j] - m)
				}
				maxScoreErr := 0.0
				for j := range n {
					maxScoreErr = math.Max(maxScoreErr, sumErr(d)*sabs[j]+u*math.Abs(sc[j]))
				}
				relP := elemRel + sumErr(n) + 2*maxScoreErr + 4*u*(math.Abs(m)+1)
				row := ((bi*h+hi)*tt + i) * s
				for j := range n {
					p[row+j] = math.Exp(sc[j]-m) / sum
					ap[row+j] = relP*p[row+j] + 0x1p-126
				}
				for e := range d {
					var acc, abs float64
					for j := range n {
						acc += p[row+j] * float64(v[kb+j*d+e])
						abs += p[row+j] * math.Abs(float64(v[kb+j*d+e]))
					}
					o := qb + i*d + e
					y[o] = acc
					ay[o] = elemRel*math.Abs(acc) + (relP+sumErr(n))*abs + u*math.Abs(acc)
				}
			}
		}
	}
	return y, ay, p, ap
}

// gqaGradRef is the gradient of q, k and v given dy and the saved p, with
// each element's bound: γ of its chain of sums times the same products of
// absolute values.
func gqaGradRef(dy, p, q, k, v []float32, bs, h, hkv, tt, s, d, offset int) (dq, adq, dk, adk, dv, adv []float64) {
	g := h / hkv
	scale := float64(float32(1 / math.Sqrt(float64(d))))
	dq, dk, dv = make([]float64, len(q)), make([]float64, len(k)), make([]float64, len(v))
	aq, ak, av := make([]float64, len(q)), make([]float64, len(k)), make([]float64, len(v))
	for bi := range bs {
		for hi := range h {
			qb := ((bi*h + hi) * tt) * d
			kb := ((bi*hkv + hi/g) * s) * d
			for i := range tt {
				n := min(s, offset+i+1)
				row := ((bi*h+hi)*tt + i) * s
				dp, dpAbs := make([]float64, n), make([]float64, n)
				var dot, dotAbs float64
				for j := range n {
					for e := range d {
						prod := float64(dy[qb+i*d+e]) * float64(v[kb+j*d+e])
						dp[j] += prod
						dpAbs[j] += math.Abs(prod)
					}
					pj := float64(p[row+j])
					dot += dp[j] * pj
					dotAbs += dpAbs[j] * pj
				}
				for j := range n {
					pj := float64(p[row+j])
					ds, dsAbs := pj*(dp[j]-dot)*scale, pj*(dpAbs[j]+dotAbs)*scale
					for e := range d {
						dq[qb+i*d+e] += ds * float64(k[kb+j*d+e])
						aq[qb+i*d+e] += dsAbs * math.Abs(float64(k[kb+j*d+e]))
						dk[kb+j*d+e] += ds * float64(q[qb+i*d+e])
						ak[kb+j*d+e] += dsAbs * math.Abs(float64(q[qb+i*d+e]))
						dv[kb+j*d+e] += pj * float64(dy[qb+i*d+e])
						av[kb+j*d+e] += pj * math.Abs(float64(dy[qb+i*d+e]))
					}
				}
			}
		}
	}
	se := sumErr(d + 2*max(s, g*tt))
	bound := func(want, abs []float64) []float64 {
		out := make([]float64, len(want))
		for i := range want {
			out[i] = elemRel*math.Abs(want[i]) + se*abs[i] + 1e-30
		}
		return out
	}
	return dq, bound(dq, aq), dk, bound(dk, ak), dv, bound(dv, av)
}

// testGroupedAttention checks GroupedAttention and its gradient for
// grouped (H/Hkv = 3), multi-head (1) and multi-query (H) attention, with
// queries at offset 0 (training, prefill) and after cached positions
// (decoding one or several tokens), with contiguous keys and values and
// with slices of a cache [B, Hkv, capacity, D] at an offset.
func testGroupedAttention(t testing.TB, b tensor.Backend) {
	ga, ok := b.(tensor.GroupedAttention)
	if !ok {
		t.Logf("%s does not implement tensor.GroupedAttention: nothing to check", b.Device())
		return
	}
	r := NewRand(t)
	for _, c := range [][6]int{ // B, H, Hkv, T, offset, D
		{1, 1, 1, 1, 0, 1}, {2, 3, 3, 5, 0, 4}, {2, 6, 2, 7, 0, 8}, {1, 4, 1, 6, 0, 16},
		{2, 6, 2, 1, 9, 8}, {1, 4, 1, 3, 5, 4}, {2, 4, 4, 1, 12, 8}, {2, 9, 3, 33, 0, 64}, {1, 8, 2, 40, 30, 32},
	} {
		bs, h, hkv, tt, offset, d := c[0], c[1], c[2], c[3], c[4], c[5]
		s := offset + tt
		for _, kv := range []string{"contiguous", "cache", "interleaved"} {
			if kv == "interleaved" && bs > 1 && hkv > 1 {
				continue // [B, S, Hkv, D] viewed as [B·Hkv, S, D] needs B or Hkv 1
			}
			name := fmt.Sprintf("GroupedAttention B=%d H=%d Hkv=%d T=%d offset=%d D=%d k,v %s", bs, h, hkv, tt, offset, d, kv)
			q, k, v := randn(r, bs*h*tt*d), randn(r, bs*hkv*s*d), randn(r, bs*hkv*s*d)
			for i := range q {
				q[i] *= 2
			}
			qs := b.FromFloat32s(q)
			// the keys and values as stored: contiguous; in a cache of
			// s+3 positions per head after 5 other elements; or with the
			// heads of a position side by side ([B, S, Hkv, D], as a
			// projection writes them), rows Hkv·D apart
			kl := tensor.Layout{Shape: []int{bs * hkv, s, d}, Strides: []int{s * d, d, 1}}
			store := func(x []float32) tensor.Storage { return b.FromFloat32s(x) }
			switch kv {
			case "cache":
				capacity, pad := s+3, 5
				kl = tensor.Layout{Shape: []int{bs * hkv, s, d}, Strides: []int{capacity * d, d, 1}, Offset: pad}
				store = func(x []float32) tensor.Storage {
					buf := randn(r, pad+bs*hkv*capacity*d)
					for hd := range bs * hkv {
						copy(buf[pad+hd*capacity*d:], x[hd*s*d:(hd+1)*s*d])
					}
					return b.FromFloat32s(buf)
				}
			case "interleaved":
				head := d
				if hkv == 1 {
					head = s * d
				}
				kl = tensor.Layout{Shape: []int{bs * hkv, s, d}, Strides: []int{head, hkv * d, 1}}
				store = func(x []float32) tensor.Storage {
					buf := make([]float32, len(x))
					for hd := range bs * hkv {
						bi, kh := hd/hkv, hd%hkv
						for j := range s {
							copy(buf[((bi*s+j)*hkv+kh)*d:], x[(hd*s+j)*d:(hd*s+j+1)*d])
						}
					}
					return b.FromFloat32s(buf)
				}
			}
			ks, vs := store(k), store(v)
			y, p := poisoned(b, tensor.Float32, bs*h*tt*d), poisoned(b, tensor.Float32, bs*h*tt*s)
			ga.GroupedAttention(y, p, qs, ks, kl, vs, kl, bs, h, hkv, tt, s, d, offset)
			wy, ay, wp, ap := gqaRef(q, k, v, bs, h, hkv, tt, s, d, offset)
			checkBound(t, name+" p", read(b, p), wp, ap)
			checkBound(t, name+" y", read(b, y), wy, ay)

			p32 := round32(wp)
			dy := randn(r, bs*h*tt*d)
			dq, dk, dv := poisoned(b, tensor.Float32, len(q)), poisoned(b, tensor.Float32, len(k)), poisoned(b, tensor.Float32, len(v))
			ps, dys := b.FromFloat32s(p32), b.FromFloat32s(dy)
			ga.GroupedAttentionGrad(dq, dk, dv, dys, ps, qs, ks, kl, vs, kl, bs, h, hkv, tt, s, d, offset)
			wq, aq, wk, ak, wv, av := gqaGradRef(dy, p32, q, k, v, bs, h, hkv, tt, s, d, offset)
			checkBound(t, name+" dq", read(b, dq), wq, aq)
			checkBound(t, name+" dk", read(b, dk), wk, ak)
			checkBound(t, name+" dv", read(b, dv), wv, av)
			// the value gradient alone (queries and keys frozen)
			dv = poisoned(b, tensor.Float32, len(v))
			ga.GroupedAttentionGrad(nil, nil, dv, dys, ps, qs, ks, kl, vs, kl, bs, h, hkv, tt, s, d, offset)
			checkBound(t, name+" dv alone", read(b, dv), wv, av)
			if rc, ok := b.(tensor.GroupedAttentionRecomputer); ok {
				checkRecompute(t, name, b, ga, rc, y, p, qs, ks, kl, vs, dys, bs, h, hkv, tt, s, d, offset)
			}
		}
	}
}

// checkRecompute checks that GroupedAttentionRecomputer gives bit for bit
// GroupedAttention's y (written into y with its weights p) and the
// gradients that GroupedAttentionGrad computes from p.
func checkRecompute(t testing.TB, name string, b tensor.Backend, ga tensor.GroupedAttention, rc tensor.GroupedAttentionRecomputer,
	y, p, qs, ks tensor.Storage, kl tensor.Layout, vs, dys tensor.Storage, bs, h, hkv, tt, s, d, offset int) {
	t.Helper()
	same := func(what string, got, want tensor.Storage) {
		t.Helper()
		g, w := read(b, got), read(b, want)
		for i := range w {
			if math.Float32bits(g[i]) != math.Float32bits(w[i]) {
				t.Errorf("%s %s: element %d is %v recomputed, %v from the saved weights", name, what, i, g[i], w[i])
				return
			}
		}
	}
	y2 := poisoned(b, tensor.Float32, bs*h*tt*d)
	rc.GroupedAttentionNoWeights(y2, qs, ks, kl, vs, kl, bs, h, hkv, tt, s, d, offset)
	same("y without weights", y2, y)
	n, m := bs*h*tt*d, bs*hkv*s*d
	dq, dk, dv := poisoned(b, tensor.Float32, n), poisoned(b, tensor.Float32, m), poisoned(b, tensor.Float32, m)
	ga.GroupedAttentionGrad(dq, dk, dv, dys, p, qs, ks, kl, vs, kl, bs, h, hkv, tt, s, d, offset)
	rq, rk, rv := poisoned(b, tensor.Float32, n), poisoned(b, tensor.Float32, m), poisoned(b, tensor.Float32, m)
	rc.GroupedAttentionGradRecompute(rq, rk, rv, dys, qs, ks, kl, vs, kl, bs, h, hkv, tt, s, d, offset)
	same("dq recomputed", rq, dq)
	same("dk recomputed", rk, dk)
	same("dv recomputed", rv, dv)
	rv = poisoned(b, tensor.Float32, m)
	rc.GroupedAttentionGradRecompute(nil, nil, rv, dys, qs, ks, kl, vs, kl, bs, h, hkv, tt, s, d, offset)
	same("dv alone recomputed", rv, dv)
}
