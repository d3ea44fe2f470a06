package kernels

// The elementwise sweeps of softmaxRowFast (log-softmax) and
// softmaxGradRowFast, with the AVX-512 kernels of kernels_amd64.s on whole
// blocks of 16 elements, the AVX2 ones on a block of 8 after them and Go on
// the rest. Each is the Go loop's float32 operations in its order, so the
// results do not depend on the path.

// LogSoftmaxOut writes (x[i] − m) − c into y.
func LogSoftmaxOut(y, x []float32, m, c float32) {
	x = x[:len(y)]
	if n := len(y) &^ 15; avx512 && n > 0 {
		logSoftmaxAVX512(&y[0], &x[0], n, m, c)
		y, x = y[n:], x[n:]
	}
	if n := len(y) &^ 7; avx2 && n > 0 {
		logSoftmaxAVX2(&y[0], &x[0], n, m, c)
		y, x = y[n:], x[n:]
	}
	for j, v := range x {
		y[j] = v - m - c
	}
}

// SoftmaxGradOut writes y[i]·(g[i] − a) into d.
func SoftmaxGradOut(d, y, g []float32, a float32) {
	y, g = y[:len(d)], g[:len(d)]
	if n := len(d) &^ 15; avx512 && n > 0 {
		softmaxGradAVX512(&d[0], &y[0], &g[0], n, a)
		d, y, g = d[n:], y[n:], g[n:]
	}
	if n := len(d) &^ 7; avx2 && n > 0 {
		softmaxGradAVX2(&d[0], &y[0], &g[0], n, a)
		d, y, g = d[n:], y[n:], g[n:]
	}
	for j, v := range y {
		d[j] = v * (g[j] - a)
	}
}

// LogSoftmaxGradOut replaces d[i] (e^y[i]) by g[i] − d[i]·a.
func LogSoftmaxGradOut(d, g []float32, a float32) {
	g = g[:len(d)]
	if n := len(d) &^ 15; avx512 && n > 0 {
		logSoftmaxGradAVX512(&d[0], &g[0], n, a)
		d, g = d[n:], g[n:]
	}
	if n := len(d) &^ 7; avx2 && n > 0 {
		logSoftmaxGradAVX2(&d[0], &g[0], n, a)
		d, g = d[n:], g[n:]
	}
	for j, e := range d {
		d[j] = g[j] - e*a
	}
}
