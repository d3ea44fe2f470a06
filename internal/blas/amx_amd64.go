//go:build amd64 && !purego

package blas

import "github.com/wickml/wick/internal/cpu"

// amxAsm says whether GemmBF16 takes the AMX path (only where WICK_CPU=amx
// asks for it and the tiles are granted; see package cpu), and amxTile is
// that path's 32×32 kernel: amxKernel32x32 there, its Go twin elsewhere
// (for tests of the path's packing and blocking).
var (
	amxAsm  = cpu.HasAMXBF16
	amxTile = pickAMXTile()
)

func pickAMXTile() func(kq int, a *uint16, rs int, b *uint32, c *float32, ldc, acc int, cfg *[64]byte) {
	if cpu.HasAMXBF16 {
		return amxKernel32x32
	}
	return amxTileGo
}

// amxKernel32x32 is amxTileGo with the AMX tiles (see amx_amd64.s); it
// runs only where cpu.HasAMXBF16.
//
//go:noescape
func amxKernel32x32(kq int, a *uint16, rs int, b *uint32, c *float32, ldc, acc int, cfg *[64]byte)
