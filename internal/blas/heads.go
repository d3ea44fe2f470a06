package blas

import "github.com/wickml/wick/internal/cpu"

// Attention of one query position over a cache whose rows hold every
// head's keys (or values) side by side, GPT's [capacity, heads·d]: the
// per-head products Sgemm computes, with Sgemm's bits, but reading the
// cache's rows once each, in address order. Per head, Sgemm reads a
// head's d columns of every row, rows 4·heads·d bytes apart; at GPT-2's
// shapes those strided passes read the cache at a third of the rate the
// weights stream at (docs/benchmarks.md).

// HeadDots writes p[h·ldp + i] = Σ_j q[h·d + j]·k[i·ldk + h·d + j] for
// h < heads and i < seq: for each head the product Sgemm(false, true, 1,
// seq, d, q[h·d:], d, k[h·d:], ldk, p[h·ldp:], ldp, false, 1) computes,
// bit for bit.
func HeadDots(heads, seq, d int, q, k []float32, ldk int, p []float32, ldp int) {
	if heads <= 0 || seq <= 0 || d <= 0 {
		return
	}
	if !headsAsm(d) {
		for h := range heads {
			Sgemm(false, true, 1, seq, d, q[h*d:], d, k[h*d:], ldk, p[h*ldp:], ldp, false, 1)
		}
		return
	}
	_, _ = q[heads*d-1], k[(seq-1)*ldk+heads*d-1]
	_ = p[(heads-1)*ldp+seq-1]
	// as gemvT: the rows in whole quadruples by the vector kernel, the
	// last seq%4 by gemvLast's dotGo
	full := seq / 4 * 4
	if full > 0 {
		headDotsAVX512(full, heads, d/16, &q[0], &k[0], ldk, &p[0], ldp)
	}
	for i := full; i < seq; i++ {
		for h := range heads {
			p[h*ldp+i] = dotGo(q[h*d:(h+1)*d], k[i*ldk+h*d:])
		}
	}
}

// HeadAxpys writes y[h·d + j] = Σ_i p[h·ldp + i]·v[i·ldv + h·d + j] for
// h < heads and j < d: for each head the product Sgemm(false, false, 1,
// d, seq, p[h·ldp:], ldp, v[h·d:], ldv, y[h·d:], d, false, 1) computes,
// bit for bit (its depth blocks, each summed from zero by fused
// multiply-adds in order and added to the sum of those before).
func HeadAxpys(heads, seq, d int, p []float32, ldp int, v []float32, ldv int, y []float32) {
	if heads <= 0 || d <= 0 {
		return
	}
	if seq <= 0 || !headsAsm(d) {
		for h := range heads {
			Sgemm(false, false, 1, d, seq, p[h*ldp:], ldp, v[h*d:], ldv, y[h*d:], d, false, 1)
		}
		return
	}
	_, _ = p[(heads-1)*ldp+seq-1], v[(seq-1)*ldv+heads*d-1]
	n := heads * d
	y = y[:n]
	buf := getBuf(&gemvBufs, n)
	defer gemvBufs.Put(buf)
	acc := (*buf)[:n]
	kc := active.depthBlock(1, d, seq)
	for i0 := 0; i0 < seq; i0 += kc {
		rows := min(kc, seq-i0)
		clear(acc)
		headAxpysAVX512(rows, heads, d/16, &p[i0], ldp, &v[i0*ldv], ldv, &acc[0])
		if i0 == 0 {
			copy(y, acc)
			continue
		}
		for j, a := range acc {
			y[j] = a + y[j]
		}
	}
}

// headsAsm reports whether the head kernels give Sgemm's bits for depth
// d: Sgemm runs the AVX-512 path (the one-row dot products with
// gemv1AVX512's sums, the 4×32 kernel's fused multiply-adds) and d is
// whole vectors.
func headsAsm(d int) bool {
	return active != nil && active.level >= cpu.AVX512 && d%16 == 0
}
