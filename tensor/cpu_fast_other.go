//go:build !amd64 || purego

package tensor

// geluAsm is false: there are no assembly kernels for this platform.
var geluAsm = false

func geluAVX2(dst, x *float32, n int)         { panic("tensor: geluAVX2 without assembly") }
func geluGradAVX2(dst, gr, x *float32, n int) { panic("tensor: geluGradAVX2 without assembly") }

func expSubAVX2(x *float32, n int, m float32) float32 { panic("tensor: expSubAVX2 without assembly") }

func adamwAVX2(p, gr, m, v *float32, n int, c *adamwConsts) {
	panic("tensor: adamwAVX2 without assembly")
}
