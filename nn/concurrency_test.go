package nn_test

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/wickml/wick/autograd"
	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/optim"
	"github.com/wickml/wick/tensor"

	"github.com/wickml/wick/internal/approx"
)

var concCfg = nn.GPTConfig{VocabSize: 11, BlockSize: 8, NLayer: 1, NHead: 2, NEmbd: 16, Bias: true}

// concModel returns model i, initialised from seed i on the calling
// goroutine (the global generator is shared, so models are made one after
// the other).
func concModel(i int) *nn.GPT {
	tensor.ManualSeed(uint64(100 + i))
	return nn.NewGPT(concCfg)
}

// trainSteps trains m for steps AdamW steps on batches drawn from its own
// generator (seed i), with gradient clipping, as the CLI does.
func trainSteps(m *nn.GPT, i, steps int) {
	gen := tensor.NewGenerator(uint64(i))
	opt := optim.NewAdamWGroups(optim.DecayGroups(m.Parameters(), 0.1), optim.AdamWConfig{LR: 1e-2})
	for range steps {
		toks := make([]int, 2*(concCfg.BlockSize+1))
		for j := range toks {
			toks[j] = gen.IntN(concCfg.VocabSize)
		}
		var x, y []int
		for b := range 2 {
			row := toks[b*(concCfg.BlockSize+1) : (b+1)*(concCfg.BlockSize+1)]
			x = append(x, row[:concCfg.BlockSize]...)
			y = append(y, row[1:]...)
		}
		loss := m.Loss(tensor.FromInts(x, 2, concCfg.BlockSize), tensor.FromInts(y, 2, concCfg.BlockSize))
		loss.Backward()
		optim.ClipGradNorm(m.Parameters(), 1)
		opt.Step()
		opt.ZeroGrad()
	}
}

func weights(m *nn.GPT) [][]float32 {
	var w [][]float32
	for _, p := range m.Parameters() {
		w = append(w, p.Float32s())
	}
	return w
}

// TestConcurrentTrainingAndInference trains four models on four goroutines
// while four more loop Generate and NoGrad-wrapped forward passes on other
// models: each trained model must end bit-identical to training it alone.
func TestConcurrentTrainingAndInference(t *testing.T) {
	const trainers, steps = 4, 50
	want := make([][][]float32, trainers)
	for i := range trainers {
		m := concModel(i)
		trainSteps(m, i, steps)
		want[i] = weights(m)
	}

	models := make([]*nn.GPT, trainers)
	for i := range trainers {
		models[i] = concModel(i)
	}
	others := make([]*nn.GPT, 4)
	for i := range others {
		others[i] = concModel(10 + i)
		others[i].Eval()
	}
	var training, inference sync.WaitGroup
	var stop atomic.Bool
	var loops atomic.Int64
	for i := range trainers {
		training.Add(1)
		go func() {
			defer training.Done()
			trainSteps(models[i], i, steps)
		}()
	}
	for i, o := range others {
		inference.Add(1)
		go func() {
			defer inference.Done()
			prompt := tensor.FromInts([]int{1, 2, 3}, 1, 3)
			for n := 0; n == 0 || !stop.Load(); n++ {
				if i%2 == 0 {
					o.Generate(prompt, 4, 1, 0)
				} else {
					autograd.NoGrad(func() {
						if o.Forward(prompt).IsRequiringGrad() {
							panic("a forward pass inside NoGrad was recorded")
						}
					})
				}
				loops.Add(1)
			}
		}()
	}
	training.Wait()
	stop.Store(true)
	inference.Wait()
	t.Logf("%d inference calls ran beside training", loops.Load())
	for i, m := range models {
		got := weights(m)
		for p := range got {
			for j := range got[p] {
				if got[p][j] != want[i][p][j] {
					t.Fatalf("model %d, parameter %d, element %d: %v trained beside others, %v trained alone", i, p, j, got[p][j], want[i][p][j])
				}
			}
		}
	}
}

// TestConcurrentBackwardIntoSharedModelDetected: two goroutines that
// backpropagate into one model's parameters at once get a clear panic on at
// least one side rather than silently lost gradients, or they happen not to
// collide and the gradients are the sum of both.
func TestConcurrentBackwardIntoSharedModelDetected(t *testing.T) {
	m := concModel(0)
	x := tensor.FromInts([]int{1, 2, 3, 4, 5, 6, 7, 8}, 1, 8)
	y := tensor.FromInts([]int{2, 3, 4, 5, 6, 7, 8, 9}, 1, 8)
	ref := concModel(0)
	l := ref.Loss(x, y)
	l.Backward()
	ref.Loss(x, y).Backward()
	wantGrad := ref.Wte.Weight.Grad().Float32s()
	for range 20 {
		for _, p := range m.Parameters() {
			p.ZeroGrad()
		}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for g := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[g] = tensor.Catch(func() { m.Loss(x, y).Backward() })
			}()
		}
		wg.Wait()
		if errs[0] != nil || errs[1] != nil {
			for _, err := range errs {
				if err != nil && !strings.Contains(err.Error(), "same leaf") {
					t.Fatalf("unexpected error: %v", err)
				}
			}
			continue
		}
		got := m.Wte.Weight.Grad().Float32s()
		for j := range got {
			// The two passes may interleave their accumulations into the
			// tied wte/lm_head weight, so the sum may be associated
			// differently: equal up to rounding, nothing lost.
			if !approx.Scalar(float64(got[j]), float64(wantGrad[j]), 1e-5, 1e-7) {
				t.Fatalf("two Backwards into one model that did not collide: grad[%d] = %v, want %v (the sum of both)", j, got[j], wantGrad[j])
			}
		}
	}
}
