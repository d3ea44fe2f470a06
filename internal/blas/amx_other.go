//go:build !amd64 || purego

package blas

// amxAsm is false and amxTile the Go twin: builds without assembly have
// no AMX path (tests run the path's packing and blocking on the twin).
var (
	amxAsm  = false
	amxTile = amxTileGo
)
