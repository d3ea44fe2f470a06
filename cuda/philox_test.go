package cuda

import (
	"math/bits"
	"testing"
)

// The Go reference of csrc/random.cu's generator; TestRandom (cuda tag)
// compares the kernels with it, TestPhiloxKnownAnswer (every build) checks
// it against the published vectors.

// philox is Philox4x32-10 in Go, the reference for csrc/random.cu.
func philox(c [4]uint32, k [2]uint32) [4]uint32 {
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

func philoxGroup(q, seed, offset uint64) [4]uint32 {
	return philox([4]uint32{uint32(q), uint32(q >> 32), uint32(offset), uint32(offset >> 32)}, [2]uint32{uint32(seed), uint32(seed >> 32)})
}

// TestPhiloxKnownAnswer checks the Go reference against Random123's
// published known-answer vectors (kat_vectors: philox4x32_10).
func TestPhiloxKnownAnswer(t *testing.T) {
	for _, kat := range []struct {
		c    [4]uint32
		k    [2]uint32
		want [4]uint32
	}{
		{[4]uint32{0, 0, 0, 0}, [2]uint32{0, 0}, [4]uint32{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
		{[4]uint32{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, [2]uint32{0xffffffff, 0xffffffff}, [4]uint32{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
		{[4]uint32{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, [2]uint32{0xa4093822, 0x299f31d0}, [4]uint32{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
	} {
		if got := philox(kat.c, kat.k); got != kat.want {
			t.Errorf("philox(%x, %x) = %x, want %x", kat.c, kat.k, got, kat.want)
		}
	}
}
