package tensor

import (
	"math"
	"math/rand/v2"
)

// Generator is a seedable source of random numbers for tensor creation,
// dropout and sampling. Its state can be saved and restored.
type Generator struct {
	pcg *rand.PCG
	r   *rand.Rand
}

// NewGenerator returns a generator seeded with seed.
func NewGenerator(seed uint64) *Generator {
	g := &Generator{}
	g.Seed(seed)
	return g
}

// Seed resets the generator to the state given by seed.
func (g *Generator) Seed(seed uint64) {
	g.pcg = rand.NewPCG(seed, 0x9e3779b97f4a7c15)
	g.r = rand.New(g.pcg)
}

// State returns the generator's state as bytes, for checkpoints.
func (g *Generator) State() []byte {
	b, _ := g.pcg.MarshalBinary()
	return b
}

// SetState restores a state returned by State.
func (g *Generator) SetState(b []byte) error { return g.pcg.UnmarshalBinary(b) }

// Float64 returns a uniform number in [0, 1).
func (g *Generator) Float64() float64 { return g.r.Float64() }

// NormFloat64 returns a standard normal number.
func (g *Generator) NormFloat64() float64 { return g.r.NormFloat64() }

// IntN returns a uniform integer in [0, n).
func (g *Generator) IntN(n int) int { return g.r.IntN(n) }

var global = NewGenerator(0)

// ManualSeed seeds the global generator used by Rand, Randn, Dropout and
// sampling, like torch.manual_seed.
func ManualSeed(seed uint64) { global.Seed(seed) }

// GlobalGenerator returns the global generator.
func GlobalGenerator() *Generator { return global }

// Rand returns a Float32 tensor of numbers uniform in [0, 1).
func Rand(shape ...int) *Tensor {
	checkShape("Rand", shape)
	data := make([]float32, numel(shape))
	for i := range data {
		data[i] = float32(global.Float64())
	}
	return New(data, shape...)
}

// Randn returns a Float32 tensor of standard normal numbers.
func Randn(shape ...int) *Tensor {
	checkShape("Randn", shape)
	data := make([]float32, numel(shape))
	for i := range data {
		data[i] = float32(global.NormFloat64())
	}
	return New(data, shape...)
}

// RandInt returns an Int64 tensor of integers uniform in [lo, hi).
func RandInt(lo, hi int, shape ...int) *Tensor {
	checkAlloc("RandInt", Int64, shape) // the ints it draws take 8 bytes each
	if hi <= lo {
		panicf("RandInt", "empty range [%d, %d)", lo, hi)
	}
	data := make([]int, numel(shape))
	for i := range data {
		data[i] = lo + global.IntN(hi-lo)
	}
	return FromInts(data, shape...)
}

// NormalInit fills t in place with normal numbers of the given mean and
// standard deviation (like torch.nn.init.normal_). Not recorded.
func (t *Tensor) NormalInit(mean, std float64) *Tensor {
	data := make([]float32, t.Numel())
	for i := range data {
		data[i] = float32(mean + std*global.NormFloat64())
	}
	t.CopyFrom(New(data, t.layout.Shape...))
	return t
}

// UniformInit fills t in place with numbers uniform in [lo, hi) (like
// torch.nn.init.uniform_). Not recorded.
func (t *Tensor) UniformInit(lo, hi float64) *Tensor {
	data := make([]float32, t.Numel())
	for i := range data {
		data[i] = float32(lo + (hi-lo)*global.Float64())
	}
	t.CopyFrom(New(data, t.layout.Shape...))
	return t
}

// Multinomial draws one index from each row of the non-negative weights
// probs ([rows, n] or [n]) and returns them as an Int64 tensor ([rows] or
// [1]).
func Multinomial(probs *Tensor) *Tensor {
	mustFloat("Multinomial", probs)
	p := probs
	if p.Dim() == 1 {
		p = p.Unsqueeze(0)
	}
	if p.Dim() != 2 {
		panicf("Multinomial", "expected 1-D or 2-D probabilities, got shape %v", probs.layout.Shape)
	}
	rows, n := p.layout.Shape[0], p.layout.Shape[1]
	w := p.Float32s()
	out := make([]int, rows)
	for r := range rows {
		var total float64
		for _, v := range w[r*n : (r+1)*n] {
			if v < 0 || math.IsNaN(float64(v)) {
				panicf("Multinomial", "probabilities must be non-negative and finite")
			}
			total += float64(v)
		}
		if total <= 0 {
			panicf("Multinomial", "row %d of probabilities sums to zero", r)
		}
		u := global.Float64() * total
		idx := n - 1
		var acc float64
		for j, v := range w[r*n : (r+1)*n] {
			acc += float64(v)
			if u < acc {
				idx = j
				break
			}
		}
		out[r] = idx
	}
	return FromInts(out, rows)
}
