//go:build !amd64 || purego

package serve

// wideHeads is false without the assembly: decodeRow's Go loops run.
func wideHeads(d int) bool { return false }

func dots(q, keys []float32, ld int, sc []float32) {
	panic("serve: dots called without the assembly kernel")
}

func axpys(out, w, vals []float32, ld int) { panic("serve: axpys called without the assembly kernel") }
