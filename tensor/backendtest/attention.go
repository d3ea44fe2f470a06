package backendtest

import (
	"fmt"
	"math"
	"testing"

	"github.com/wickml/wick/tensor"
)

// attentionRef is multi-head attention on the packed qkv [B, T, 3·nh·hs]
// in float64: per batch element and head, S = q·kᵀ/√hs (masked above the
// diagonal when causal, and zero there), P = softmax(S), y = P·v; it
// returns y [B, T, nh·hs] and P [B, nh, T, T] with their bounds: a score
// is a sum of hs products, a row of P and each y a sum of T terms.
func attentionRef(qkv []float32, bs, tt, nh, hs int, causal bool) (y, ay, p, ap []float64) {
	c := nh * hs
	scale := float64(float32(1 / math.Sqrt(float64(hs))))
	y, ay = make([]float64, bs*tt*c), make([]float64, bs*tt*c)
	p, ap = make([]float64, bs*nh*tt*tt), make([]float64, bs*nh*tt*tt)
	at := func(bi, ti, part, h, d int) float64 { return float64(qkv[(bi*tt+ti)*3*c+part*c+h*hs+d]) }
	for bi := range bs {
		for h := range nh {
			for i := range tt {
				n := tt
				if causal {
					n = i + 1
				}
				s, sabs := make([]float64, n), make([]float64, n)
				m := math.Inf(-1)
				for j := range n {
					for d := range hs {
						s[j] += at(bi, i, 0, h, d) * at(bi, j, 1, h, d)
						sabs[j] += math.Abs(at(bi, i, 0, h, d) * at(bi, j, 1, h, d))
					}
					s[j] *= scale
					sabs[j] *= scale
					m = math.Max(m, s[j])
				}
				var sum float64
				for j := range n {
					sum += math.Exp(s[j] - m)
				}
				// a score is off by γ_hs·Σ|q·k|, which exp turns into a
				// relative error of p; the row sum adds γ_n
				row := ((bi*nh+h)*tt + i) * tt
				maxScoreErr := 0.0
				for j := range n {
					maxScoreErr = math.Max(maxScoreErr, sumErr(hs)*sabs[j]+u*math.Abs(s[j]))
				}
				relP := elemRel + sumErr(n) + 2*maxScoreErr + 4*u*(math.Abs(m)+1)
				for j := range n {
					p[row+j] = math.Exp(s[j]-m) / sum
					ap[row+j] = relP*p[row+j] + 0x1p-126
				}
				for d := range hs {
					var acc, abs float64
					for j := range n {
						acc += p[row+j] * at(bi, j, 2, h, d)
						abs += p[row+j] * math.Abs(at(bi, j, 2, h, d))
					}
					o := (bi*tt+i)*c + h*hs + d
					y[o] = acc
					ay[o] = elemRel*math.Abs(acc) + (relP+sumErr(n))*abs + u*math.Abs(acc)
				}
			}
		}
	}
	return y, ay, p, ap
}

// attentionGradRef is the gradient of qkv given dy and the saved p
// (float32, as the forward kernel wrote it), with each element's bound:
// dv = pᵀ·dy, dp = dy·vᵀ, ds = p∘(dp − Σ dp∘p), dq = ds·k/√hs,
// dk = dsᵀ·q/√hs. The bound of each output is γ of its chain of sums
// (hs + T + T terms) times the same products formed from absolute values.
func attentionGradRef(dy, p, qkv []float32, bs, tt, nh, hs int, causal bool) (want, allowed []float64) {
	c := nh * hs
	scale := float64(float32(1 / math.Sqrt(float64(hs))))
	want, allowed = make([]float64, len(qkv)), make([]float64, len(qkv))
	absOut := make([]float64, len(qkv))
	idx := func(bi, ti, part, h, d int) int { return (bi*tt+ti)*3*c + part*c + h*hs + d }
	for bi := range bs {
		for h := range nh {
			// ds and its absolute-value twin, [T, T]
			ds, dsAbs := make([]float64, tt*tt), make([]float64, tt*tt)
			for i := range tt {
				n := tt
				if causal {
					n = i + 1
				}
				row := ((bi*nh+h)*tt + i) * tt
				dp, dpAbs := make([]float64, n), make([]float64, n)
				var dot, dotAbs float64
				for j := range n {
					for d := range hs {
						g, v := float64(dy[(bi*tt+i)*c+h*hs+d]), float64(qkv[idx(bi, j, 2, h, d)])
						dp[j] += g * v
						dpAbs[j] += math.Abs(g * v)
					}
					pj := float64(p[row+j])
					dot += dp[j] * pj
					dotAbs += dpAbs[j] * pj
				}
				for j := range n {
					pj := float64(p[row+j])
					ds[i*tt+j] = pj * (dp[j] - dot)
					dsAbs[i*tt+j] = pj * (dpAbs[j] + dotAbs)
				}
			}
			for i := range tt {
				for d := range hs {
					var dq, dqAbs, dk, dkAbs, dv, dvAbs float64
					for j := range tt {
						dq += ds[i*tt+j] * float64(qkv[idx(bi, j, 1, h, d)])
						dqAbs += dsAbs[i*tt+j] * math.Abs(float64(qkv[idx(bi, j, 1, h, d)]))
						dk += ds[j*tt+i] * float64(qkv[idx(bi, j, 0, h, d)])
						dkAbs += dsAbs[j*tt+i] * math.Abs(float64(qkv[idx(bi, j, 0, h, d)]))
						pji := float64(p[((bi*nh+h)*tt+j)*tt+i])
						if !causal || i <= j {
							g := float64(dy[(bi*tt+j)*c+h*hs+d])
							dv += pji * g
							dvAbs += pji * math.Abs(g)
						}
					}
					qi, ki, vi := idx(bi, i, 0, h, d), idx(bi, i, 1, h, d), idx(bi, i, 2, h, d)
					want[qi], absOut[qi] = dq*scale, dqAbs*scale
					want[ki], absOut[ki] = dk*scale, dkAbs*scale
					want[vi], absOut[vi] = dv, dvAbs
				}
			}
		}
	}
	se := sumErr(hs + 2*tt)
	for i := range want {
		allowed[i] = elemRel*math.Abs(want[i]) + se*absOut[i] + 1e-30
	}
	return want, allowed
}

// testAttention checks the fused attention of backends that implement
// tensor.FusedAttention, forward and backward, with batches split per
// batch element and per head.
func testAttention(t testing.TB, b tensor.Backend) {
	fa, ok := b.(tensor.FusedAttention)
	if !ok {
		t.Logf("%s does not implement tensor.FusedAttention: nothing to check", b.Device())
		return
	}
	r := NewRand(t)
	for _, sh := range [][4]int{{1, 1, 1, 1}, {2, 5, 3, 4}, {5, 17, 2, 8}, {2, 128, 6, 64}} {
		bs, tt, nh, hs := sh[0], sh[1], sh[2], sh[3]
		c := nh * hs
		for _, causal := range []bool{true, false} {
			name := fmt.Sprintf("Attention B=%d T=%d nh=%d hs=%d causal=%v", bs, tt, nh, hs, causal)
			qkv := randn(r, bs*tt*3*c)
			qs := b.FromFloat32s(qkv)
			y, p := poisoned(b, tensor.Float32, bs*tt*c), poisoned(b, tensor.Float32, bs*nh*tt*tt)
			fa.Attention(y, p, qs, bs, tt, nh, hs, causal)
			wy, ay, wp, ap := attentionRef(qkv, bs, tt, nh, hs, causal)
			checkBound(t, name+" p", read(b, p), wp, ap)
			checkBound(t, name+" y", read(b, y), wy, ay)

			// backward from the reference's p
			p32 := round32(wp)
			dy := randn(r, bs*tt*c)
			dq := poisoned(b, tensor.Float32, bs*tt*3*c)
			fa.AttentionGrad(dq, b.FromFloat32s(dy), b.FromFloat32s(p32), qs, bs, tt, nh, hs, causal)
			want, allowed := attentionGradRef(dy, p32, qkv, bs, tt, nh, hs, causal)
			checkBound(t, name+" dqkv", read(b, dq), want, allowed)

			// recomputed probabilities: bit for bit y and the gradient
			// from the probabilities the forward pass wrote
			if rc, ok := b.(tensor.AttentionRecomputer); ok {
				dys := b.FromFloat32s(dy)
				y2 := poisoned(b, tensor.Float32, bs*tt*c)
				rc.AttentionNoWeights(y2, qs, bs, tt, nh, hs, causal)
				sameBits(t, name+" y without weights", read(b, y2), read(b, y))
				dq, dr := poisoned(b, tensor.Float32, bs*tt*3*c), poisoned(b, tensor.Float32, bs*tt*3*c)
				fa.AttentionGrad(dq, dys, p, qs, bs, tt, nh, hs, causal)
				rc.AttentionGradRecompute(dr, dys, qs, bs, tt, nh, hs, causal)
				sameBits(t, name+" dqkv recomputed", read(b, dr), read(b, dq))
			}
		}
	}
}

// sameBits fails t unless got and want are bit for bit equal.
func sameBits(t testing.TB, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Errorf("%s: element %d is %v, want %v", what, i, got[i], want[i])
			return
		}
	}
}

// testDropoutMask checks the device-side dropout masks of backends that
// implement tensor.DropoutMasker: every element 0 or 1/(1−p), the share of
// zeros p (within six standard deviations), a function of the seed and
// the element index only (the same seed gives the same mask, a shorter
// mask is a prefix of a longer one), and other seeds other masks.
func testDropoutMask(t testing.TB, b tensor.Backend) {
	dm, ok := b.(tensor.DropoutMasker)
	if !ok {
		t.Logf("%s does not implement tensor.DropoutMasker: nothing to check", b.Device())
		return
	}
	for _, p := range []float32{0.1, 0.25, 0.5} {
		keep := 1 / (1 - p)
		const n = 1 << 20
		mask := func(n int, seed uint64) []float32 {
			s := poisoned(b, tensor.Float32, n)
			dm.DropoutMask(s, n, p, seed)
			return read(b, s)
		}
		a, a2, short, other := mask(n, 42), mask(n, 42), mask(4099, 42), mask(n, 43)
		zeros, same := 0, 0
		for i, v := range a {
			switch v {
			case 0:
				zeros++
			case keep:
			default:
				t.Fatalf("DropoutMask p=%v: element %d is %v, want 0 or %v", p, i, v, keep)
			}
			if a2[i] != v {
				t.Fatalf("DropoutMask p=%v: element %d differs between two draws with one seed (%v, %v)", p, i, v, a2[i])
			}
			if i < len(short) && short[i] != v {
				t.Fatalf("DropoutMask p=%v: element %d of a 4099-element mask is %v, of a %d-element one %v", p, i, short[i], n, v)
			}
			if other[i] == v {
				same++
			}
		}
		sd := math.Sqrt(n * float64(p) * float64(1-p))
		if d := math.Abs(float64(zeros) - n*float64(p)); d > 6*sd {
			t.Errorf("DropoutMask p=%v: %d zeros in %d, want %.0f ± %.0f", p, zeros, n, n*float64(p), 6*sd)
		}
		// two independent masks agree where both keep or both drop
		agree := float64(p*p + (1-p)*(1-p))
		if d := math.Abs(float64(same) - n*agree); d > 6*math.Sqrt(n*agree*(1-agree)) {
			t.Errorf("DropoutMask p=%v: seeds 42 and 43 agree on %d of %d elements, want about %.0f", p, same, n, n*agree)
		}
	}
}
