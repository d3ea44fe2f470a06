//go:build amd64 && !purego

package blas

import "github.com/wickml/wick/internal/cpu"

// The widening of bfloat16 rows to float32 (widen_amd64.s); widen_other.go
// has their Go twins under the same names for builds without assembly.

// widenAsm512 and widenAsm2 say whether widen16AVX512 and widen16AVX2 run;
// tests switch them off.
var (
	widenAsm512 = cpu.HasAVX512
	widenAsm2   = cpu.HasAVX2FMA
)

// widen16AVX512 writes to dst[i] the float32 value of the bfloat16 pattern
// src[i] for i < n (n a multiple of 64, ≥ 64).
//
//go:noescape
func widen16AVX512(dst *float32, src *uint16, n int)

// widen16AVX2 is widen16AVX512 on AVX2 (n a multiple of 32, ≥ 32).
//
//go:noescape
func widen16AVX2(dst *float32, src *uint16, n int)
