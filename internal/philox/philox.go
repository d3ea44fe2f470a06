// Package philox is the Go reference of the GPU's random numbers
// (csrc/random.cu): Philox4x32-10 as Random123 defines it, and the
// counter and key layout the kernels use. Only tests and the kernel
// emulation check (scripts/kernel_emu/gen) import it.
package philox

import "math/bits"

// Block returns Philox4x32-10 of counter c under key k.
func Block(c [4]uint32, k [2]uint32) [4]uint32 {
	const m0, m1, w0, w1 = 0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85
	for r := range 10 {
		if r > 0 {
			k[0] += w0
			k[1] += w1
		}
		hi0, lo0 := bits.Mul32(m0, c[0])
		hi1, lo1 := bits.Mul32(m1, c[2])
		c = [4]uint32{hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0}
	}
	return c
}

// Group returns the four words the kernels draw for elements 4q to 4q+3 of
// a launch with the given seed and offset: the counter is (q, offset), the
// key the seed.
func Group(q, seed, offset uint64) [4]uint32 {
	return Block([4]uint32{uint32(q), uint32(q >> 32), uint32(offset), uint32(offset >> 32)}, [2]uint32{uint32(seed), uint32(seed >> 32)})
}
