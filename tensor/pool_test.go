package tensor

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/wickml/wick/autograd"
)

// poolNet is a two-layer network whose buffers are large enough for the
// free list (1024 elements and more).
type poolNet struct{ w1, b1, w2 *Tensor }

func newPoolNet(seed uint64) *poolNet {
	gen := NewGenerator(seed)
	return &poolNet{
		w1: gen.Randn(32, 64).MulScalar(0.2).RequiresGrad(),
		b1: gen.Randn(64).MulScalar(0.1).RequiresGrad(),
		w2: gen.Randn(64, 32).MulScalar(0.2).RequiresGrad(),
	}
}

func (n *poolNet) params() []*Tensor { return []*Tensor{n.w1, n.b1, n.w2} }

// stash keeps what a Function's Backward was given and what it computed,
// as user code may.
type stash struct {
	mu   sync.Mutex
	kept []*Tensor
}

// scaleFn is a user Function (y = 2x) whose Backward keeps its gradient
// and its result in st.
func scaleFn(st *stash) *Function {
	return &Function{
		Name: "Scale2",
		Forward: func(ctx *FunctionContext, in []*Tensor) []*Tensor {
			return []*Tensor{in[0].MulScalar(2)}
		},
		Backward: func(ctx *FunctionContext, g []*Tensor) []*Tensor {
			gin := g[0].MulScalar(2)
			st.mu.Lock()
			st.kept = append(st.kept, g[0], gin)
			st.mu.Unlock()
			return []*Tensor{gin}
		},
	}
}

// held is what the user of a training step keeps from it.
type held struct {
	act, view, det, retained, retainedGrad, userGrad, loss *Tensor
}

// step runs one training step of n on x (forward with the hidden layer in
// a Scope, backward, SGD update, ZeroGrad) and returns what a user could
// keep from it. Temporaries are released along the way, as ClipGradNorm
// does.
func (n *poolNet) step(x *Tensor, st *stash) held {
	act := Scope(func() *Tensor { return x.MatMul(n.w1).Add(n.b1).GELU() }) // [48, 64]
	out := scaleFn(st).Apply(act.MatMul(n.w2)).RetainGrad()                 // [48, 32]
	loss := out.Tanh().Square().Mean()
	h := held{act: act, view: act.T(), det: act.Detach(), retained: out, loss: loss}
	loss.Backward()
	h.retainedGrad = out.Grad()
	h.userGrad = n.w1.Grad()
	autograd.NoGrad(func() {
		for _, p := range n.params() {
			upd := p.Grad().MulScalar(0.5)
			p.Detach().CopyFrom(p.Detach().Sub(upd))
			upd.Release()
			p.ZeroGrad()
		}
	})
	return h
}

func (h held) tensors() []*Tensor {
	return []*Tensor{h.act, h.view, h.det, h.retained, h.retainedGrad, h.userGrad, h.loss}
}

func snapshot(ts []*Tensor) [][]float32 {
	var out [][]float32
	for _, t := range ts {
		out = append(out, t.Float32s())
	}
	return out
}

func sameBits(a, b []float32) bool {
	return slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
}

// train runs steps steps of a fresh network and returns its final weights,
// the tensors kept from the first step with their values right after it,
// and the Function's stash.
func train(t *testing.T, seed uint64, steps int) (weights [][]float32, first held, firstVals [][]float32, st *stash, stashVals [][]float32) {
	n := newPoolNet(seed)
	x := NewGenerator(seed+1).Randn(48, 32)
	st = &stash{}
	first = n.step(x, st)
	firstVals = snapshot(first.tensors())
	stashVals = snapshot(st.kept)
	for range steps - 1 {
		n.step(x, st)
	}
	return snapshot(n.params()), first, firstVals, st, stashVals
}

// TestFreeListKeepsLiveTensors trains a small network with every source
// of recycling at work (the backward pass's temporaries, a Scope's
// activations, Release) while holding, from the first step, a Scope's
// result, a view and a Detach of it, a retained gradient and the non-leaf
// it belongs to, a parameter's gradient taken before ZeroGrad, and the
// tensors a Function's Backward kept. After more steps, whose buffers come
// from the free list, each must hold the values it had, and the weights
// must equal those of the same training with no reuse at all.
func TestFreeListKeepsLiveTensors(t *testing.T) {
	drainPool()
	hits := poolStats.hits.Load()
	weights, first, firstVals, st, stashVals := train(t, 7, 6)
	if got := poolStats.hits.Load() - hits; got < 20 {
		t.Fatalf("the free list served %d allocations in 6 steps; the test needs reuse to mean anything", got)
	}
	names := []string{"Scope result", "view of it", "Detach of it", "retained non-leaf", "retained gradient", "parameter gradient before ZeroGrad", "loss"}
	for i, v := range snapshot(first.tensors()) {
		if !sameBits(v, firstVals[i]) {
			t.Errorf("%s kept from the first step changed after later steps", names[i])
		}
	}
	for i, v := range snapshot(st.kept[:len(stashVals)]) {
		if !sameBits(v, stashVals[i]) {
			t.Errorf("tensor %d kept by a Function's Backward changed after later steps", i)
		}
	}

	// the reference: nothing goes back to the free list
	old := poolMaxBytes.Load()
	poolMaxBytes.Store(0)
	drainPool()
	want, _, wantFirst, _, _ := train(t, 7, 6)
	poolMaxBytes.Store(old)
	for i := range want {
		if !sameBits(weights[i], want[i]) {
			t.Errorf("weight %d after training with reuse differs from training without", i)
		}
	}
	for i := range wantFirst {
		if !sameBits(firstVals[i], wantFirst[i]) {
			t.Errorf("%s differs from training without reuse", names[i])
		}
	}
}

// TestScopeRecyclesTemporaries checks when a Scope's temporaries are
// reused: after the backward pass through its result when recorded, at
// once when not; never its result or views of it. A temporary kept against
// Scope's rule panics with an *Error on use.
func TestScopeRecyclesTemporaries(t *testing.T) {
	gen := NewGenerator(3)
	x, w := gen.Randn(40, 50), gen.Randn(50, 60).RequiresGrad()
	var leaked *Tensor
	out := Scope(func() *Tensor {
		leaked = x.MatMul(w) // 2400 elements: pooled
		return leaked.Tanh().Reshape(60, 40)
	})
	if err := Catch(func() { leaked.Float32s() }); err != nil {
		t.Fatalf("a temporary needed by the recorded graph was recycled before Backward: %v", err)
	}
	keep := out.Float32s()
	out.Sum().Backward()
	err := Catch(func() { leaked.Float32s() })
	var te *Error
	if !errors.As(err, &te) || !strings.Contains(te.Msg, "reused") {
		t.Errorf("using a Scope's temporary after Backward: %v, want an *Error saying its memory was reused", err)
	}
	if !sameBits(out.Float32s(), keep) {
		t.Error("the Scope's result changed")
	}

	// not recorded: recycled when Scope returns
	autograd.NoGrad(func() {
		out := Scope(func() *Tensor {
			leaked = x.MatMul(w)
			return leaked.Tanh().T()
		})
		if err := Catch(func() { leaked.Float32s() }); err == nil {
			t.Error("a temporary of an unrecorded Scope was not recycled when it returned")
		}
		if err := Catch(func() { out.Float32s() }); err != nil {
			t.Errorf("the result (a view of a temporary's storage) was recycled: %v", err)
		}
	})

	// a gradient set inside a Scope belongs to its tensor
	autograd.NoGrad(func() {
		p := Zeros(40, 60)
		var g *Tensor
		Scope(func() *Tensor {
			g = x.MatMul(w)
			p.SetGrad(g)
			return x.Sum()
		})
		if err := Catch(func() { p.Grad().Float32s() }); err != nil {
			t.Errorf("a gradient set with SetGrad inside a Scope was recycled: %v", err)
		}
	})

	// nested: the inner result belongs to the outer Scope, which returns
	// a view of it
	autograd.NoGrad(func() {
		var inner *Tensor
		out := Scope(func() *Tensor {
			inner = Scope(func() *Tensor { return x.MatMul(w).Tanh() })
			return inner.Reshape(-1)
		})
		if err := Catch(func() { out.Sum() }); err != nil {
			t.Errorf("nested Scope result: %v", err)
		}
	})
}

// TestFreeListZeroesAndPins: storage that must be zero-filled is, when it
// comes from the free list; uninitialised storage from the free list is
// poisoned like fresh memory in tests; HostFloat32s keeps its buffer out of
// the free list.
func TestFreeListZeroesAndPins(t *testing.T) {
	drainPool()
	a := Full(7, 4096)
	a.Release()
	hits := poolStats.hits.Load()
	z := Zeros(4096)
	if poolStats.hits.Load() == hits {
		t.Fatal("Zeros did not take the released buffer")
	}
	for i, v := range z.Float32s() {
		if v != 0 {
			t.Fatalf("Zeros from the free list: element %d is %v", i, v)
		}
	}
	z.Release()
	u := emptyOut("test", cpu, Float32, []int{4096})
	for i, v := range fs(u.storage) {
		if math.Float32bits(v) != math.Float32bits(poison) {
			t.Fatalf("uninitialised buffer from the free list: element %d is %v, want the poison", i, v)
		}
	}

	drainPool()
	p := Full(3, 4096)
	s := p.HostFloat32s()
	p.Release()
	b := Full(5, 4096)
	for i, v := range s {
		if v != 3 {
			t.Fatalf("a HostFloat32s slice changed after its tensor was released and another allocated: element %d is %v", i, v)
		}
	}
	b.Release()
	b.Release() // twice: the buffer is handed over once
	c, d := Full(1, 4096), Full(2, 4096)
	if &fs(c.storage)[0] == &fs(d.storage)[0] {
		t.Fatal("two live tensors share a buffer after a double Release")
	}
}

// TestFreeListConcurrentTraining trains several networks on as many
// goroutines at once, each with its own graph, Scope and Releases, all
// feeding and drawing from the one free list; each must end with the
// weights of the same training run alone, and the tensors it kept from its
// first step unchanged. Run it with -race.
func TestFreeListConcurrentTraining(t *testing.T) {
	const workers, steps = 4, 5
	want := make([][][]float32, workers)
	for i := range workers {
		want[i], _, _, _, _ = train(t, uint64(10+i), steps)
	}
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, first, firstVals, _, _ := train(t, uint64(10+i), steps)
			for j := range got {
				if !sameBits(got[j], want[i][j]) {
					errs <- fmt.Errorf("goroutine %d: weight %d differs from training alone", i, j)
					return
				}
			}
			for j, v := range snapshot(first.tensors()) {
				if !sameBits(v, firstVals[j]) {
					errs <- fmt.Errorf("goroutine %d: tensor %d kept from the first step changed", i, j)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestFreeListTrims: a buffer left in the free list through two trims
// (collector cycles) goes back to the collector; one taken and freed again
// in between stays.
func TestFreeListTrims(t *testing.T) {
	trimPaused.Store(true) // only this test's ticks
	defer trimPaused.Store(false)
	drainPool()
	bytes := func() int64 {
		f32Pool.mu.Lock()
		defer f32Pool.mu.Unlock()
		return f32Pool.bytes
	}
	Full(1, 4096).Release()
	Full(1, 2048).Release()
	if got := bytes(); got != (4096+2048)*4 {
		t.Fatalf("free list holds %d bytes, want %d", got, (4096+2048)*4)
	}
	trimPool()
	if got := bytes(); got != (4096+2048)*4 {
		t.Fatalf("after one trim the free list holds %d bytes, want all %d", got, (4096+2048)*4)
	}
	Zeros(2048).Release() // taken and freed again: fresh
	trimPool()
	if got := bytes(); got != 2048*4 {
		t.Fatalf("after two trims the free list holds %d bytes, want only the buffer reused in between (%d)", got, 2048*4)
	}
	trimPool()
	if got := bytes(); got != 0 {
		t.Fatalf("after three trims the free list holds %d bytes, want 0", got)
	}
}

// TestBackwardReusesWhileRunning: the gradients and temporaries that a
// node's closure consumes are reused by the next nodes of the same pass,
// so a long chain needs a few buffers, not one per node; branches that
// share an upstream gradient (Add passes its gradient to both inputs)
// keep it until both have used it. The input's gradient must equal the one
// computed with no reuse.
func TestBackwardReusesWhileRunning(t *testing.T) {
	grad := func() ([]float32, int64) {
		x := NewGenerator(4).Randn(64, 64).RequiresGrad()
		y := x
		for i := range 12 {
			if i%3 == 0 {
				y = y.Tanh().Add(y.MulScalar(0.5)) // a fork: Add's gradient goes to both
				continue
			}
			y = y.Sigmoid().Mul(y)
		}
		drainPool()
		hits := poolStats.hits.Load()
		y.Square().Sum().Backward()
		return x.Grad().Float32s(), poolStats.hits.Load() - hits
	}
	got, hits := grad()
	if hits < 10 {
		t.Errorf("a backward pass through 28 nodes of 4096 elements took %d buffers from the free list; want its consumed gradients reused", hits)
	}
	old := poolMaxBytes.Load()
	poolMaxBytes.Store(0)
	want, _ := grad()
	poolMaxBytes.Store(old)
	if !sameBits(got, want) {
		t.Error("the gradient computed with reuse differs from the one without")
	}
}

// TestLeafTakesWholeTemporaries checks ownsWhole, which lets a leaf take a
// gradient that its backward pass computed instead of copying it: only a
// storage of the running pass, viewed whole and in order, that no pending
// gradient views and no leaf took already.
func TestLeafTakesWholeTemporaries(t *testing.T) {
	outside := Zeros(64, 32).AddScalar(1)
	a := &tracker{backward: true}
	autograd.WithScope(a, func() {
		fresh := Zeros(64, 32).AddScalar(1)
		small := Zeros(3, 4).AddScalar(1) // below the free list's size: not pooled
		cases := []struct {
			what string
			g    *Tensor
			want bool
		}{
			{"a fresh pooled result of the pass", fresh, true},
			{"a tensor from before the pass", outside, false},
			{"a transposed view", fresh.T(), false},
			{"a view of part of it", fresh.Narrow(0, 0, 32), false},
			{"a view from an offset", fresh.Narrow(0, 1, 63), false},
			{"an unpooled result", small, false},
		}
		for _, c := range cases {
			if got := a.ownsWhole(c.g); got != c.want {
				t.Errorf("%s: ownsWhole = %v, want %v", c.what, got, c.want)
			}
		}
		pending := Zeros(64, 32).AddScalar(1)
		a.ref(pending)
		if a.ownsWhole(pending) {
			t.Error("a pending gradient of another node: ownsWhole = true, want false")
		}
		a.unref(pending)
		if !a.ownsWhole(pending) {
			t.Error("the gradient once no longer pending: ownsWhole = false, want true")
		}
		escape(pending)
		if a.ownsWhole(pending) {
			t.Error("a storage a leaf took already (escaped): ownsWhole = true, want false")
		}
	})
	var none *tracker
	if none.ownsWhole(outside) {
		t.Error("no pass running: ownsWhole = true, want false")
	}
}

// TestLeafGradsDoNotAlias checks that leaves whose gradients the backward
// pass hands over whole (the same gradient to two leaves of an Add, a
// transposed weight's gradient, a bias's summed one) end up with
// gradients of their own: writing one changes no other, and the values
// are those of the copies they replace.
func TestLeafGradsDoNotAlias(t *testing.T) {
	gen := NewGenerator(3)
	w1 := gen.Randn(64, 32).RequiresGrad()
	w2 := gen.Randn(64, 32).RequiresGrad()
	w3 := gen.Randn(48, 32).RequiresGrad()
	b := gen.Randn(48).RequiresGrad()
	c := gen.Randn(64, 32)
	x := w1.Add(w2) // Add hands its gradient g to both leaves
	y := x.Mul(c).MatMul(w3.T()).Add(b)
	y.Square().Sum().Backward()

	// the expected gradients, from the graph's pieces without autograd
	x0 := w1.Detach().Add(w2.Detach())
	xc := x0.Mul(c)
	dy := xc.MatMul(w3.Detach().T()).Add(b.Detach()).MulScalar(2)
	want := map[string][]float32{
		"w1": dy.MatMul(w3.Detach()).Mul(c).Float32s(),
		"w3": dy.T().MatMul(xc).Float32s(),
		"b":  dy.Sum(0).Float32s(),
	}
	want["w2"] = want["w1"]
	leaves := map[string]*Tensor{"w1": w1, "w2": w2, "w3": w3, "b": b}
	for name, l := range leaves {
		if got := l.Grad().Float32s(); !slices.Equal(got, want[name]) {
			t.Errorf("%s's gradient differs from the one computed without autograd", name)
		}
	}
	for name, l := range leaves {
		before := map[string][]float32{}
		for other, o := range leaves {
			before[other] = o.Grad().Float32s()
		}
		l.Grad().Fill_(7)
		for other, o := range leaves {
			if other != name && !slices.Equal(o.Grad().Float32s(), before[other]) {
				t.Errorf("writing %s's gradient changed %s's", name, other)
			}
		}
	}
}
