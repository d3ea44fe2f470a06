//go:build amd64 && !purego

package kernels

// geluPrevAVX2, geluPrevGradAVX2, geluPrevAVX512 and geluPrevGradAVX512 are
// the GELU kernels before the change that keeps underflowing lanes out of
// the subnormal range (gelu_prev_amd64.s); tests compare the current ones
// with them.
//
//go:noescape
func geluPrevAVX2(dst, x *float32, n int)

//go:noescape
func geluPrevGradAVX2(dst, gr, x *float32, n int)

//go:noescape
func geluPrevAVX512(dst, x *float32, n int)

//go:noescape
func geluPrevGradAVX512(dst, gr, x *float32, n int)
