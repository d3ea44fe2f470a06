package kernels

import "math"

// The Go twins of the assembly kernels, in slice form: each computes what
// its kernel of kernels_amd64.s computes for the whole slice, in plain Go.
// kernels_noasm.go calls them under the kernels' own names in builds
// without assembly, and kernels_amd64_test.go compares each kernel with
// its twin. Where a kernel takes its sums in vector lanes, the twin takes
// them in one chain (the results differ by the rounding of the additions);
// elsewhere a twin does the kernel's float32 (or float64) operations in
// its order, or evaluates the function the kernel approximates (GELU32, the
// float64 references of Exp, Tanh and Sigmoid).

func geluGo(dst, x []float32) {
	for i, v := range x[:len(dst)] {
		dst[i] = GELU32(v)
	}
}

func geluGradGo(dst, g, x []float32) {
	for i, v := range x[:len(dst)] {
		cdf, pdf := NormCDFPDF(v)
		dst[i] = g[i] * (cdf + v*pdf)
	}
}

func expGo(dst, x []float32) {
	for i, v := range x[:len(dst)] {
		dst[i] = float32(math.Exp(float64(v)))
	}
}

func tanhGo(dst, x []float32) {
	for i, v := range x[:len(dst)] {
		dst[i] = float32(math.Tanh(float64(v)))
	}
}

func sigmoidGo(dst, x []float32) {
	for i, v := range x[:len(dst)] {
		dst[i] = float32(1 / (1 + math.Exp(-float64(v))))
	}
}

func adamwGo(p, g, ms, vs []float32, c *AdamWConsts) {
	for i, gv := range g[:len(p)] {
		mv := ms[i]*c.B1 + gv*c.A1
		vv := vs[i]*c.B2 + gv*gv*c.A2
		ms[i], vs[i] = mv, vv
		denom := float32(math.Sqrt(float64(vv)))/c.BC2Sqrt + c.Eps
		p[i] = p[i]*c.Decay - c.StepSize*(mv/denom)
	}
}

// maxGo returns the largest element of x, NaN if x holds one (max
// propagates NaN), −Inf for an empty x.
func maxGo(x []float32) float32 {
	m := float32(math.Inf(-1))
	for _, v := range x {
		m = max(m, v)
	}
	return m
}

func scaleGo(x []float32, k float32) {
	for i := range x {
		x[i] *= k
	}
}

// arithGo writes d[i] = a[i] op b[i].
func arithGo(op ArithOp, d, a, b []float32) {
	a, b = a[:len(d)], b[:len(d)]
	switch op {
	case Add:
		for k := range d {
			d[k] = a[k] + b[k]
		}
	case Sub:
		for k := range d {
			d[k] = a[k] - b[k]
		}
	case Mul:
		for k := range d {
			d[k] = a[k] * b[k]
		}
	case Div:
		for k := range d {
			d[k] = a[k] / b[k]
		}
	}
}

func expSubToGo(dst, x []float32, m float32) float32 {
	var sum float32
	for i, v := range x[:len(dst)] {
		e := Exp32(v - m)
		dst[i] = e
		sum += e
	}
	return sum
}

// sumF64Go is SumF64's Go part: four chains of float64 additions.
func sumF64Go(x []float32) float64 {
	var a0, a1, a2, a3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		v := x[i : i+4 : i+4]
		a0 += float64(v[0])
		a1 += float64(v[1])
		a2 += float64(v[2])
		a3 += float64(v[3])
	}
	for ; i < len(x); i++ {
		a0 += float64(x[i])
	}
	return (a0 + a1) + (a2 + a3)
}

// dotF64Go is DotF64's Go part: four chains of float64 products.
func dotF64Go(a, b []float32) float64 {
	b = b[:len(a)]
	var a0, a1, a2, a3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		u, v := a[i:i+4:i+4], b[i:i+4:i+4]
		a0 += float64(u[0]) * float64(v[0])
		a1 += float64(u[1]) * float64(v[1])
		a2 += float64(u[2]) * float64(v[2])
		a3 += float64(u[3]) * float64(v[3])
	}
	for ; i < len(a); i++ {
		a0 += float64(a[i]) * float64(b[i])
	}
	return (a0 + a1) + (a2 + a3)
}

func lnSqDevGo(x []float32, mu float64) float64 {
	var s float64
	for _, v := range x {
		d := float64(v) - mu
		s += d * d
	}
	return s
}

func lnNormGo(dst, x, w, b []float32, mu, r float64) {
	for j, v := range x[:len(dst)] {
		y := float32((float64(v)-mu)*r) * w[j]
		if b != nil {
			y += b[j]
		}
		dst[j] = y
	}
}

func lnGradSumsGo(g, x, w []float32, mu, r float64, accW, accB []float64) (s1, s2 float64) {
	for j, v := range x {
		xh := (float64(v) - mu) * r
		gv := float64(g[j])
		dh := gv * float64(w[j])
		s1 += dh
		s2 += dh * xh
		if accW != nil {
			accW[j] += gv * xh
			accB[j] += gv
		}
	}
	return s1, s2
}

func lnGradDxGo(dx, g, x, w []float32, mu, r, s1, s2 float64) {
	for j, v := range x[:len(dx)] {
		xh := (float64(v) - mu) * r
		dx[j] = float32(r * (float64(g[j])*float64(w[j]) - s1 - xh*s2))
	}
}

func softmaxGradGo(d, y, g []float32, a float32) {
	for j, v := range y[:len(d)] {
		d[j] = v * (g[j] - a)
	}
}

func logSoftmaxGradGo(d, g []float32, a float32) {
	for j, e := range d {
		d[j] = g[j] - e*a
	}
}

func logSoftmaxGo(y, x []float32, m, c float32) {
	for j, v := range x[:len(y)] {
		y[j] = v - m - c
	}
}

// softmaxScaledGo is SoftmaxScaled's composition in Go.
func softmaxScaledGo(x []float32, scale float32) {
	scaleGo(x, scale)
	m := maxGo(x)
	if m != m || m > 3.4e38 || m < -3.4e38 {
		m = 0
	}
	scaleGo(x, 1/expSubToGo(x, x, m))
}

// softmaxGradRowGo is SoftmaxGradScaled's composition in Go.
func softmaxGradRowGo(d, p []float32, scale float32) {
	softmaxGradGo(d, p, d, float32(dotF64Go(d, p)))
	scaleGo(d, scale)
}
