package nn_test

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/wickml/wick/autograd"
	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/optim"
	"github.com/wickml/wick/tensor"
)

// poolCfg is large enough that activations and gradients (1024 elements
// and more) go through the CPU free list.
var poolCfg = nn.GPTConfig{VocabSize: 37, BlockSize: 16, NLayer: 2, NHead: 2, NEmbd: 32, Bias: true}

const poolBatch = 4

// poolBatchOf draws a batch of token windows from gen.
func poolBatchOf(gen *tensor.Generator) (x, y *tensor.Tensor) {
	var xs, ys []int
	for range poolBatch {
		row := make([]int, poolCfg.BlockSize+1)
		for j := range row {
			row[j] = gen.IntN(poolCfg.VocabSize)
		}
		xs = append(xs, row[:poolCfg.BlockSize]...)
		ys = append(ys, row[1:]...)
	}
	return tensor.FromInts(xs, poolBatch, poolCfg.BlockSize), tensor.FromInts(ys, poolBatch, poolCfg.BlockSize)
}

func bitsEqual(a, b []float32) bool {
	return slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
}

// poolTrain trains a model (seed) for steps AdamW steps with gradient
// clipping, as the CLI does. On the first step it keeps what a user may
// keep: the logits, a view and a Detach of them, their retained gradient,
// a Block's output (called directly on an input of its own) and a view of
// it, and a parameter's gradient before ZeroGrad. It returns the final
// weights, the kept tensors and their values right after the first step.
func poolTrain(seed uint64, dropout float32, steps int) (w [][]float32, kept []*tensor.Tensor, vals [][]float32) {
	cfg := poolCfg
	cfg.Dropout = dropout
	gen := tensor.NewGenerator(seed)
	m := nn.NewGPTWith(cfg, gen)
	m.SetDropoutGenerator(gen)
	opt := optim.NewAdamWGroups(optim.DecayGroups(m.Parameters(), 0.1), optim.AdamWConfig{LR: 1e-2})
	xin := gen.Randn(poolBatch, cfg.BlockSize, cfg.NEmbd).RequiresGrad()
	for i := range steps {
		x, y := poolBatchOf(gen)
		logits, loss := m.ForwardLoss(x, y)
		if i == 0 {
			logits.RetainGrad()
			blk := m.H[0].Forward(xin)
			loss = loss.Add(blk.Square().Mean())
			kept = []*tensor.Tensor{logits, logits.Reshape(-1), logits.Detach(), blk, blk.Transpose(0, 1)}
		}
		loss.Backward()
		optim.ClipGradNorm(m.Parameters(), 1)
		if i == 0 {
			kept = append(kept, logits.Grad(), m.Wte.Weight.Grad(), xin.Grad(), loss)
			for _, k := range kept {
				vals = append(vals, k.Float32s())
			}
		}
		opt.Step()
		opt.ZeroGrad()
	}
	for _, p := range m.Parameters() {
		w = append(w, p.Float32s())
	}
	return w, kept, vals
}

var keptNames = []string{"logits", "a view of the logits", "a Detach of the logits", "a Block's output", "a view of it", "the logits' retained gradient", "a parameter's gradient before ZeroGrad", "an input's gradient", "the loss"}

// TestFreeListKeepsModelOutputs trains a GPT (with and without dropout)
// while holding tensors from its first step; the later steps reuse the
// first step's activations and gradients through the free list, and must
// leave every held tensor as it was.
func TestFreeListKeepsModelOutputs(t *testing.T) {
	for _, p := range []float32{0, 0.1} {
		t.Run(fmt.Sprint("dropout=", p), func(t *testing.T) {
			_, kept, vals := poolTrain(1, p, 5)
			for i, k := range kept {
				var got []float32
				if err := tensor.Catch(func() { got = k.Float32s() }); err != nil {
					t.Errorf("%s kept from the first step: %v", keptNames[i], err)
					continue
				}
				if !bitsEqual(got, vals[i]) {
					t.Errorf("%s kept from the first step changed in later steps", keptNames[i])
				}
			}
		})
	}
}

// TestFreeListConcurrentGPTTraining trains three models on three
// goroutines while a fourth runs inference (Generate and NoGrad forward
// passes, whose Scopes recycle at once) on a fifth model, all sharing the
// CPU free list: each trained model must end bit-identical to training it
// alone, with the tensors it kept intact. Run it with -race.
func TestFreeListConcurrentGPTTraining(t *testing.T) {
	const trainers = 3
	want := make([][][]float32, trainers)
	for i := range trainers {
		want[i], _, _ = poolTrain(uint64(20+i), 0, 3)
	}
	serve := nn.NewGPTWith(poolCfg, tensor.NewGenerator(99))
	serve.Eval()
	stop := make(chan struct{})
	var inf sync.WaitGroup
	inf.Add(1)
	go func() {
		defer inf.Done()
		gen := tensor.NewGenerator(5)
		for {
			select {
			case <-stop:
				return
			default:
			}
			x, _ := poolBatchOf(gen)
			autograd.NoGrad(func() { serve.Forward(x).Sum() })
			serve.GenerateWith(x.Slice(1, 0, 4), 3, 1, 0, gen)
		}
	}()
	errs := make(chan error, trainers)
	var wg sync.WaitGroup
	for i := range trainers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, kept, vals := poolTrain(uint64(20+i), 0, 3)
			for j := range got {
				if !bitsEqual(got[j], want[i][j]) {
					errs <- fmt.Errorf("goroutine %d: parameter %d differs from training alone", i, j)
					return
				}
			}
			for j, k := range kept {
				if !bitsEqual(k.Float32s(), vals[j]) {
					errs <- fmt.Errorf("goroutine %d: %s kept from the first step changed", i, keptNames[j])
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	inf.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
