package tensor_test

import (
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/wickml/wick/internal/plugintest"
	"github.com/wickml/wick/tensor"
)

// drawAll runs every operation that draws random numbers with gen (nil:
// the global generator) and returns their results, in order.
func drawAll(gen *tensor.Generator) [][]float32 {
	probs := tensor.New([]float32{0.1, 0.2, 0.3, 0.4, 1, 0, 0, 3}, 2, 4)
	return [][]float32{
		gen.Rand(3, 5).Float32s(),
		gen.Randn(7).Float32s(),
		gen.RandInt(-4, 9, 2, 6).Float32s(),
		tensor.Ones(40).DropoutWith(0.3, true, gen).Float32s(),
		gen.Multinomial(probs).Float32s(),
		gen.Multinomial(probs.Select(0, 0)).Float32s(),
		tensor.Zeros(3, 3).NormalInitWith(1, 2, gen).Float32s(),
		tensor.Zeros(9).UniformInitWith(-3, -1, gen).Float32s(),
		{float32(gen.Float64()), float32(gen.NormFloat64()), float32(gen.IntN(1000)), float32(gen.Uint64() >> 40)},
	}
}

// drawAllGlobal is drawAll through the package-level functions of the
// global generator.
func drawAllGlobal() [][]float32 {
	probs := tensor.New([]float32{0.1, 0.2, 0.3, 0.4, 1, 0, 0, 3}, 2, 4)
	g := tensor.GlobalGenerator()
	return [][]float32{
		tensor.Rand(3, 5).Float32s(),
		tensor.Randn(7).Float32s(),
		tensor.RandInt(-4, 9, 2, 6).Float32s(),
		tensor.Ones(40).Dropout(0.3, true).Float32s(),
		tensor.Multinomial(probs).Float32s(),
		tensor.Multinomial(probs.Select(0, 0)).Float32s(),
		tensor.Zeros(3, 3).NormalInit(1, 2).Float32s(),
		tensor.Zeros(9).UniformInit(-3, -1).Float32s(),
		{float32(g.Float64()), float32(g.NormFloat64()), float32(g.IntN(1000)), float32(g.Uint64() >> 40)},
	}
}

func equalDraws(a, b [][]float32) bool {
	return slices.EqualFunc(a, b, func(x, y []float32) bool { return slices.Equal(x, y) })
}

// TestGeneratorVariantsAgree checks that a nil generator is the global one,
// that the global functions draw what the Generator methods draw, that the
// zero Generator is NewGenerator(0), and that the draws depend on the seed.
func TestGeneratorVariantsAgree(t *testing.T) {
	want := drawAll(tensor.NewGenerator(5))
	tensor.ManualSeed(5)
	if got := drawAll(nil); !equalDraws(got, want) {
		t.Errorf("a nil generator after ManualSeed(5) drew\n%v\nwant NewGenerator(5)'s\n%v", got, want)
	}
	tensor.ManualSeed(5)
	if got := drawAllGlobal(); !equalDraws(got, want) {
		t.Errorf("the global functions after ManualSeed(5) drew\n%v\nwant NewGenerator(5)'s\n%v", got, want)
	}
	var zero tensor.Generator
	if got, want := drawAll(&zero), drawAll(tensor.NewGenerator(0)); !equalDraws(got, want) {
		t.Errorf("the zero Generator drew\n%v\nwant NewGenerator(0)'s\n%v", got, want)
	}
	if other := drawAll(tensor.NewGenerator(6)); equalDraws(other, want) {
		t.Errorf("seeds 5 and 6 drew the same numbers")
	}
}

// TestGeneratorState checks that State and SetState resume the sequence,
// and that a bad state is refused and leaves the generator unchanged.
func TestGeneratorState(t *testing.T) {
	g := tensor.NewGenerator(3)
	g.Randn(10)
	st := g.State()
	want := drawAll(g)
	if err := g.SetState(st); err != nil {
		t.Fatal(err)
	}
	if got := drawAll(g); !equalDraws(got, want) {
		t.Errorf("after SetState the generator drew\n%v\nwant\n%v", got, want)
	}
	st = g.State()
	if err := g.SetState([]byte("not a state")); err == nil {
		t.Errorf("SetState accepted a bad state")
	}
	if !slices.Equal(g.State(), st) {
		t.Errorf("a refused SetState changed the generator")
	}
	// Seed restarts the sequence of NewGenerator(seed)
	g.Seed(9)
	if got, want := g.Randn(4).Float32s(), tensor.NewGenerator(9).Randn(4).Float32s(); !slices.Equal(got, want) {
		t.Errorf("after Seed(9): %v, want %v", got, want)
	}
}

// TestGeneratorConcurrentGlobal uses the global generator and explicit
// ones from several goroutines at once; run under -race it shows that
// Generator needs no outside locking.
func TestGeneratorConcurrentGlobal(t *testing.T) {
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			own := tensor.NewGenerator(uint64(w))
			for i := range 30 {
				tensor.ManualSeed(uint64(i))
				x := tensor.Randn(8, 8)
				y := x.Dropout(0.5, true)
				_ = tensor.Rand(5)
				_ = tensor.RandInt(0, 3, 4)
				_ = tensor.Multinomial(tensor.Ones(2, 5))
				_ = tensor.Zeros(6).NormalInit(0, 1)
				_ = tensor.Zeros(6).UniformInit(0, 1)
				_ = x.DropoutWith(0.2, true, own)
				if w == 0 {
					g := tensor.GlobalGenerator()
					if err := g.SetState(g.State()); err != nil {
						t.Error(err)
					}
				}
				for j, v := range y.Float32s() {
					if v != 0 && v != 2*x.Float32s()[j] {
						t.Errorf("dropout element %d is %v, want 0 or %v", j, v, 2*x.Float32s()[j])
						return
					}
				}
			}
		})
	}
	wg.Wait()
}

// TestExplicitGeneratorIsolated checks that a goroutine with its own
// generator draws the same numbers as alone while other goroutines reseed
// and draw from the global generator and from their own generators.
func TestExplicitGeneratorIsolated(t *testing.T) {
	const seed = 42
	want := drawAll(tensor.NewGenerator(seed))
	stop := make(chan struct{})
	var noise sync.WaitGroup
	for w := range 3 {
		noise.Go(func() {
			own := tensor.NewGenerator(seed) // the same seed, another state
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				tensor.ManualSeed(uint64(i))
				tensor.Randn(16).Dropout(0.5, true)
				own.Randn(16 + w)
				tensor.Ones(8).DropoutWith(0.5, true, own)
			}
		})
	}
	var wg sync.WaitGroup
	got := make([][][]float32, 4)
	for k := range got {
		wg.Go(func() {
			for range 5 {
				got[k] = drawAll(tensor.NewGenerator(seed))
				if !equalDraws(got[k], want) {
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	noise.Wait()
	for k, g := range got {
		if !equalDraws(g, want) {
			t.Errorf("goroutine %d drew\n%v\nwant, as alone,\n%v", k, g, want)
		}
	}
}

// TestSharedGeneratorDrawsWholeTensors checks that each tensor's numbers
// are consecutive draws of a shared generator: goroutines sharing one
// generator get, between them, exactly the tensors that the same number of
// calls on one goroutine get, in some order.
func TestSharedGeneratorDrawsWholeTensors(t *testing.T) {
	const workers, calls, n = 4, 100, 256
	shared := tensor.NewGenerator(8)
	got := make([][]float32, workers*calls)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			<-start // all at once, so that the calls overlap
			for i := range calls {
				got[w*calls+i] = shared.Randn(n).Float32s()
			}
		})
	}
	close(start)
	wg.Wait()
	ref := tensor.NewGenerator(8)
	key := func(v []float32) string { return fmt.Sprint(v) }
	want := map[string]int{}
	for range workers * calls {
		want[key(ref.Randn(n).Float32s())]++
	}
	for i, v := range got {
		if want[key(v)] == 0 {
			t.Fatalf("tensor %d of the shared generator is not one of the sequential draws: its numbers were interleaved with another call's", i)
		}
		want[key(v)]--
	}
}

// TestGeneratorPanics checks the documented panics.
func TestGeneratorPanics(t *testing.T) {
	g := tensor.NewGenerator(1)
	for name, f := range map[string]func(){
		"IntN(0)":            func() { g.IntN(0) },
		"RandInt empty":      func() { g.RandInt(3, 3, 2) },
		"Rand negative":      func() { g.Rand(2, -1) },
		"Multinomial 3-D":    func() { g.Multinomial(tensor.Ones(2, 2, 2)) },
		"Multinomial zero":   func() { g.Multinomial(tensor.Zeros(2, 3)) },
		"Multinomial int":    func() { g.Multinomial(tensor.FromInts([]int{1, 2})) },
		"DropoutWith p>1":    func() { tensor.Ones(3).DropoutWith(1.5, true, g) },
		"Multinomial neg":    func() { g.Multinomial(tensor.New([]float32{1, -1})) },
		"Randn negative dim": func() { g.Randn(-2) },
	} {
		// Catch returns only *tensor.Error panics and re-panics others
		if err := tensor.Catch(f); err == nil {
			t.Errorf("%s: no panic", name)
		}
	}
}

// TestZeroGeneratorFirstUseConcurrent has several goroutines draw the first
// numbers of one zero Generator at once: together they must get exactly the
// first draws of NewGenerator(0), each once, which fails if the state were
// set up twice or a draw lost. Under -race it also checks the set-up.
func TestZeroGeneratorFirstUseConcurrent(t *testing.T) {
	const n = 8
	for range 20 {
		var g tensor.Generator
		got := make([]uint64, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { got[i] = g.Uint64() })
		}
		wg.Wait()
		ref := tensor.NewGenerator(0)
		want := make([]uint64, n)
		for i := range want {
			want[i] = ref.Uint64()
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("concurrent first draws of a zero Generator: %v, want NewGenerator(0)'s first %d: %v", got, n, want)
		}
	}
}

// TestGeneratorShape checks that the Generator type's fields, followed
// through pointers, slices, maps, arrays and structs, name no type from
// another package: gophernotes loads every package such a type comes from
// and warns about each generic declaration in it (math/rand/v2, sync).
func TestGeneratorShape(t *testing.T) {
	for _, e := range plugintest.ForeignTypes("Generator", reflect.TypeFor[tensor.Generator](), "github.com/wickml/wick/tensor") {
		t.Error(e)
	}
}
