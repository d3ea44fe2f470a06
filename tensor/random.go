package tensor

import (
	"github.com/wickml/wick/autograd"
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"github.com/chewxy/math32"
)

// Generator is a seedable source of random numbers for tensor creation,
// initialisation, dropout and sampling. Its state can be saved and restored.
//
// A Generator is safe for concurrent use: every method takes an internal
// lock, and the methods that fill a tensor draw all of its numbers under one
// lock, so a tensor's numbers are consecutive draws even when other
// goroutines use the same generator. Goroutines that share a generator
// interleave their draws, so which numbers each gets depends on scheduling;
// a goroutine that owns its generator (NewGenerator) gets the same numbers
// whatever other goroutines do, which makes it reproducible on its own.
//
// The global generator (GlobalGenerator, seeded by ManualSeed) is the one
// that Rand, Randn, RandInt, NormalInit, UniformInit, Dropout, Multinomial
// and the nn package's constructors, dropout layers and Generate draw from.
// It is shared by the whole process: safe, but with interleaved draws when
// several goroutines use it. Pass an explicit generator (the Generator
// methods, NormalInitWith, UniformInitWith, DropoutWith, nn.Dropout's Gen
// field, nn.GPT.GenerateWith) for numbers that do not depend on other
// goroutines.
//
// A nil *Generator stands for the global generator in every method and
// wherever a *Generator is an argument. The zero Generator is usable and
// equals NewGenerator(0).
type Generator struct {
	// The state sits behind an interface, so that the type's shape names
	// no package with generic declarations: gophernotes' interpreter walks
	// every field of an imported type, unexported ones included, loads each
	// package a field's type comes from, and prints a warning for every
	// generic function or type of such a package (math/rand/v2 and sync).
	ready int32 // 1 once st is set; read and written atomically
	st    any   // *genState; nil until first use in a zero Generator
}

// genState is a Generator's lock and random source.
type genState struct {
	mu  sync.Mutex
	pcg *rand.PCG
	r   *rand.Rand // draws from pcg
}

// pcgStream is the PCG's second seed word, fixed so that a Generator's
// numbers depend on its seed only.
const pcgStream = 0x9e3779b97f4a7c15

// newGenState returns a state seeded with seed.
func newGenState(seed uint64) *genState {
	pcg := rand.NewPCG(seed, pcgStream)
	return &genState{pcg: pcg, r: rand.New(pcg)}
}

// NewGenerator returns a generator seeded with seed.
func NewGenerator(seed uint64) *Generator {
	return &Generator{ready: 1, st: newGenState(seed)}
}

// global is the process-wide generator; a zero Generator is seeded with 0.
var global = &Generator{}

// stateInit serialises the first use of zero Generators.
var stateInit sync.Mutex

// orGlobal returns g, or the global generator if g is nil.
func (g *Generator) orGlobal() *Generator {
	if g == nil {
		return global
	}
	return g
}

// state returns g's state (the global generator's if g is nil), seeding a
// zero Generator with 0 on first use.
func (g *Generator) state() *genState {
	g = g.orGlobal()
	if atomic.LoadInt32(&g.ready) == 0 {
		stateInit.Lock()
		if atomic.LoadInt32(&g.ready) == 0 {
			g.st = newGenState(0)
			atomic.StoreInt32(&g.ready, 1)
		}
		stateInit.Unlock()
	}
	return g.st.(*genState)
}

// lock takes g's lock (the global generator's if g is nil), seeds a zero
// Generator, and returns the state to draw from; the caller unlocks it.
// Inside a Checkpoint on the calling goroutine, the draws are logged or
// replayed (rngLog).
func (g *Generator) lock() *genState {
	s := g.state()
	if log, _ := autograd.Local(rngKey{}).(*rngLog); log != nil {
		return log.lock(g.orGlobal(), s)
	}
	s.mu.Lock()
	return s
}

// lockReal is lock without the Checkpoint log: for Seed, State and
// SetState, which act on the generator itself.
func (g *Generator) lockReal() *genState {
	s := g.state()
	s.mu.Lock()
	return s
}

// Seed resets the generator to the state given by seed.
func (g *Generator) Seed(seed uint64) {
	s := g.lockReal()
	defer s.mu.Unlock()
	s.pcg.Seed(seed, pcgStream)
}

// State returns the generator's state as bytes, for checkpoints.
func (g *Generator) State() []byte {
	s := g.lockReal()
	defer s.mu.Unlock()
	b, _ := s.pcg.MarshalBinary() // never fails
	return b
}

// SetState restores a state returned by State. It returns an error, and
// leaves the generator as it was, if b is not such a state.
func (g *Generator) SetState(b []byte) error {
	s := g.lockReal()
	defer s.mu.Unlock()
	var p rand.PCG
	if err := p.UnmarshalBinary(b); err != nil {
		return err
	}
	*s.pcg = p
	return nil
}

// Float64 returns a uniform number in [0, 1).
func (g *Generator) Float64() float64 {
	s := g.lock()
	defer s.mu.Unlock()
	return s.r.Float64()
}

// NormFloat64 returns a standard normal number.
func (g *Generator) NormFloat64() float64 {
	s := g.lock()
	defer s.mu.Unlock()
	return s.r.NormFloat64()
}

// IntN returns a uniform integer in [0, n). It panics if n ≤ 0.
func (g *Generator) IntN(n int) int {
	if n <= 0 {
		panicf("Generator.IntN", "n must be positive, got %d", n)
	}
	s := g.lock()
	defer s.mu.Unlock()
	return s.r.IntN(n)
}

// Uint64 returns a uniform 64-bit number.
func (g *Generator) Uint64() uint64 {
	s := g.lock()
	defer s.mu.Unlock()
	return s.r.Uint64()
}

// fillUniform sets data[i] = lo + (hi−lo)·u with u uniform in [0, 1), all
// drawn under one lock.
func (g *Generator) fillUniform(data []float32, lo, hi float64) {
	s := g.lock()
	defer s.mu.Unlock()
	for i := range data {
		data[i] = float32(lo + (hi-lo)*s.r.Float64())
	}
}

// fillNormal sets data[i] = mean + std·z with z standard normal, all drawn
// under one lock.
func (g *Generator) fillNormal(data []float32, mean, std float64) {
	s := g.lock()
	defer s.mu.Unlock()
	for i := range data {
		data[i] = float32(mean + std*s.r.NormFloat64())
	}
}

// ManualSeed seeds the global generator used by Rand, Randn, Dropout and
// sampling, like torch.manual_seed. It is safe to call from any goroutine,
// but the global generator is shared: reseeding it changes what every other
// goroutine that draws from it gets next.
func ManualSeed(seed uint64) { global.Seed(seed) }

// GlobalGenerator returns the global generator, shared by the whole process.
func GlobalGenerator() *Generator { return global }

// Rand returns a Float32 tensor of numbers uniform in [0, 1) on the default
// device, drawn from g (the global generator if g is nil). It panics if a
// dimension is negative.
func (g *Generator) Rand(shape ...int) *Tensor {
	checkShape("Rand", shape)
	data := make([]float32, numel(shape))
	g.fillUniform(data, 0, 1)
	return New(data, shape...)
}

// Randn returns a Float32 tensor of standard normal numbers on the default
// device, drawn from g (the global generator if g is nil). It panics if a
// dimension is negative.
func (g *Generator) Randn(shape ...int) *Tensor {
	checkShape("Randn", shape)
	data := make([]float32, numel(shape))
	g.fillNormal(data, 0, 1)
	return New(data, shape...)
}

// RandInt returns an Int64 tensor of integers uniform in [lo, hi) on the
// default device, drawn from g (the global generator if g is nil). It
// panics if hi ≤ lo or a dimension is negative.
func (g *Generator) RandInt(lo, hi int, shape ...int) *Tensor {
	checkAlloc("RandInt", Int64, shape) // the ints it draws take 8 bytes each
	if hi <= lo {
		panicf("RandInt", "empty range [%d, %d)", lo, hi)
	}
	data := make([]int, numel(shape))
	d := g.lock()
	for i := range data {
		data[i] = lo + d.r.IntN(hi-lo)
	}
	d.mu.Unlock()
	return FromInts(data, shape...)
}

// Rand returns a Float32 tensor of numbers uniform in [0, 1) drawn from the
// global generator. It panics if a dimension is negative.
func Rand(shape ...int) *Tensor { return global.Rand(shape...) }

// Randn returns a Float32 tensor of standard normal numbers drawn from the
// global generator. It panics if a dimension is negative.
func Randn(shape ...int) *Tensor { return global.Randn(shape...) }

// RandInt returns an Int64 tensor of integers uniform in [lo, hi) drawn
// from the global generator. It panics if hi ≤ lo or a dimension is
// negative.
func RandInt(lo, hi int, shape ...int) *Tensor { return global.RandInt(lo, hi, shape...) }

// NormalInit fills t in place with normal numbers of the given mean and
// standard deviation (like torch.nn.init.normal_) drawn from the global
// generator. Not recorded. Like Fill_, it panics if t requires a gradient
// while the calling goroutine records (initialise before RequiresGrad,
// inside autograd.NoGrad, or through t.Detach()).
func (t *Tensor) NormalInit(mean, std float64) *Tensor { return t.NormalInitWith(mean, std, nil) }

// NormalInitWith is NormalInit with the numbers drawn from gen (the global
// generator if gen is nil).
func (t *Tensor) NormalInitWith(mean, std float64, gen *Generator) *Tensor {
	checkInPlace("NormalInit", t)
	data := make([]float32, t.Numel())
	gen.fillNormal(data, mean, std)
	t.CopyFrom(New(data, t.layout.Shape...))
	return t
}

// UniformInit fills t in place with numbers uniform in [lo, hi) (like
// torch.nn.init.uniform_) drawn from the global generator. Not recorded.
// Like Fill_, it panics if t requires a gradient while the calling
// goroutine records.
func (t *Tensor) UniformInit(lo, hi float64) *Tensor { return t.UniformInitWith(lo, hi, nil) }

// UniformInitWith is UniformInit with the numbers drawn from gen (the
// global generator if gen is nil).
func (t *Tensor) UniformInitWith(lo, hi float64, gen *Generator) *Tensor {
	checkInPlace("UniformInit", t)
	data := make([]float32, t.Numel())
	gen.fillUniform(data, lo, hi)
	t.CopyFrom(New(data, t.layout.Shape...))
	return t
}

// Multinomial draws one index from each row of the non-negative weights
// probs ([rows, n] or [n]) with the global generator and returns them as an
// Int64 tensor ([rows] or [1]). See Generator.Multinomial for the panics.
func Multinomial(probs *Tensor) *Tensor { return global.Multinomial(probs) }

// Multinomial draws one index from each row of the non-negative weights
// probs ([rows, n] or [n]) with g (the global generator if g is nil) and
// returns them as an Int64 tensor ([rows] or [1]) on the default device.
// It panics if probs is not a 1-D or 2-D Float32 tensor, holds a negative
// or NaN weight, or has a row that sums to zero.
func (g *Generator) Multinomial(probs *Tensor) *Tensor {
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
	totals := make([]float64, rows)
	for r := range rows {
		var total float64
		for _, v := range w[r*n : (r+1)*n] {
			if v < 0 || math32.IsNaN(v) {
				panicf("Multinomial", "probabilities must be non-negative and finite")
			}
			total += float64(v)
		}
		if total <= 0 {
			panicf("Multinomial", "row %d of probabilities sums to zero", r)
		}
		totals[r] = total
	}
	u := make([]float64, rows)
	d := g.lock()
	for r := range u {
		u[r] = d.r.Float64() * totals[r]
	}
	d.mu.Unlock()
	out := make([]int, rows)
	for r := range rows {
		idx := n - 1
		var acc float64
		for j, v := range w[r*n : (r+1)*n] {
			acc += float64(v)
			if u[r] < acc {
				idx = j
				break
			}
		}
		out[r] = idx
	}
	return FromInts(out, rows)
}
