//go:build amd64 && !purego

package blas

// headDotsAVX512 writes p[h·ldp + i] = q_h·k_i,h for i < seq, h < heads,
// each dot product of 16·k16 floats with gemv1AVX512's sums, reading k's
// rows (ldk floats apart) in address order (seq, heads, k16 ≥ 1).
//
//go:noescape
func headDotsAVX512(seq, heads, k16 int, q, k *float32, ldk int, p *float32, ldp int)

// headAxpysAVX512 adds p[h·ldp + i]·v[i·ldv + h·16·k16 + j] to acc[h·16·k16
// + j] for i < rows in order, h < heads, j < 16·k16, each by a fused
// multiply-add, reading v's rows in address order (rows, heads, k16 ≥ 1).
//
//go:noescape
func headAxpysAVX512(rows, heads, k16 int, p *float32, ldp int, v *float32, ldv int, acc *float32)
