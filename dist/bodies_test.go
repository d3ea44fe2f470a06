package dist

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/optim"
	"github.com/wickml/wick/tensor"

	"github.com/wickml/wick/internal/approx"
)

// The test bodies below run on every rank of a group: on goroutines of one
// process (local_test.go) and, with -tags mpi, on processes started by
// mpirun (mpi_test.go). Each rank checks its own results.

// collectiveSizes are the tensor sizes the collectives are tested on.
var collectiveSizes = []int{0, 1, 7, 1_000_000}

// intValue is rank r's element i: an integer that float32 holds exactly,
// and whose sums over a few ranks stay exact.
func intValue(r, i int) float32 { return float32((i*7+r*13)%1001 - 500) }

// realValue is rank r's element i: a non-integer value.
func realValue(r, i int) float32 {
	return float32(math.Sin(float64(i)*0.37+float64(r)*1.9) * math.Exp(float64(i%17)-8))
}

func testAllReduce(t testing.TB, c *Comm) {
	r, n := c.Rank(), c.WorldSize()
	for _, size := range collectiveSizes {
		// Sum of integers: exact.
		data := make([]float32, size)
		for i := range data {
			data[i] = intValue(r, i)
		}
		x := tensor.New(data, size)
		if err := c.AllReduce(x, Sum); err != nil {
			t.Fatalf("rank %d: AllReduce(Sum) of %d elements: %v", r, size, err)
		}
		got := x.Float32s()
		for i := range got {
			var want float32
			for q := range n {
				want += intValue(q, i)
			}
			if got[i] != want {
				t.Fatalf("rank %d: AllReduce(Sum) of %d integers: element %d = %v, want exactly %v", r, size, i, got[i], want)
			}
		}
		// Mean of reals: 1e-6 relative to the sum of magnitudes.
		for i := range data {
			data[i] = realValue(r, i)
		}
		x = tensor.New(data, size)
		if err := c.AllReduce(x, Mean); err != nil {
			t.Fatalf("rank %d: AllReduce(Mean) of %d elements: %v", r, size, err)
		}
		got = x.Float32s()
		for i := range got {
			var want, mag float64
			for q := range n {
				v := float64(realValue(q, i))
				want += v
				mag += math.Abs(v)
			}
			want /= float64(n)
			mag /= float64(n)
			if !approx.Scalar(float64(got[i]), want, 0, 1e-6*mag) {
				t.Fatalf("rank %d: AllReduce(Mean) of %d reals: element %d = %v, want %v (1e-6 relative)", r, size, i, got[i], want)
			}
		}
	}
	// A view that is not contiguous goes through a host copy.
	base := tensor.New([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	view := base.T()
	if err := c.AllReduce(view, Sum); err != nil {
		t.Fatalf("rank %d: AllReduce of a transposed view: %v", r, err)
	}
	for i, v := range base.Float32s() {
		if want := float32((i + 1) * n); v != want {
			t.Fatalf("rank %d: AllReduce of a transposed view: base element %d = %v, want %v", r, i, v, want)
		}
	}
}

func testBroadcast(t testing.TB, c *Comm) {
	r, n := c.Rank(), c.WorldSize()
	for _, root := range []int{0, n - 1} {
		for _, size := range collectiveSizes {
			data := make([]float32, size)
			for i := range data {
				data[i] = realValue(r, i)
			}
			x := tensor.New(data, size)
			if err := c.Broadcast(x, root); err != nil {
				t.Fatalf("rank %d: Broadcast of %d elements from %d: %v", r, size, root, err)
			}
			for i, v := range x.Float32s() {
				if want := realValue(root, i); v != want {
					t.Fatalf("rank %d: Broadcast of %d elements from %d: element %d = %v, want %v", r, size, root, i, v, want)
				}
			}
		}
	}
	b := []byte(fmt.Sprintf("rank %04d", r))
	if err := c.BroadcastBytes(b, n-1); err != nil {
		t.Fatalf("rank %d: BroadcastBytes: %v", r, err)
	}
	if want := fmt.Sprintf("rank %04d", n-1); string(b) != want {
		t.Fatalf("rank %d: BroadcastBytes = %q, want %q", r, b, want)
	}
}

func testAllGatherAgree(t testing.TB, c *Comm) {
	r, n := c.Rank(), c.WorldSize()
	all, err := c.AllGather([]byte(fmt.Sprint("r", r, "-", make([]byte, r))))
	if err != nil {
		t.Fatalf("rank %d: AllGather: %v", r, err)
	}
	if len(all) != n {
		t.Fatalf("rank %d: AllGather returned %d parts for %d ranks", r, len(all), n)
	}
	for q, b := range all {
		if want := fmt.Sprint("r", q, "-", make([]byte, q)); string(b) != want {
			t.Fatalf("rank %d: AllGather part %d = %q, want %q", r, q, b, want)
		}
	}
	if err := c.Barrier(); err != nil {
		t.Fatalf("rank %d: Barrier: %v", r, err)
	}
	same := map[string]string{"n_layer": "4", "corpus": "abc"}
	if err := c.Agree(same); err != nil {
		t.Fatalf("rank %d: Agree on equal fields: %v", r, err)
	}
	if n == 1 {
		return
	}
	diff := map[string]string{"n_layer": "4", "corpus": "abc"}
	if r == n-1 {
		diff["n_layer"] = "6"
	}
	err = c.Agree(diff)
	var me *MismatchError
	if !errors.As(err, &me) || me.Rank != n-1 || me.Field != "n_layer" || me.Value != "6" || me.Rank0Value != "4" {
		t.Fatalf("rank %d: Agree with n_layer=6 on rank %d: got %v, want a MismatchError naming both", r, n-1, err)
	}
}

// ddpConfig is the model of the data-parallel test.
var ddpConfig = nn.GPTConfig{VocabSize: 16, BlockSize: 8, NLayer: 2, NHead: 2, NEmbd: 16, Bias: false} // no bias: the key bias of attention has a gradient of pure rounding noise, which Adam amplifies to full steps

// ddpBatch returns the rows of step's full batch (rows×block tokens and
// targets), the same on every rank.
func ddpBatch(step, rows int) (x, y []int) {
	g := tensor.NewGenerator(uint64(1000 + step))
	T := ddpConfig.BlockSize
	x, y = make([]int, rows*T), make([]int, rows*T)
	for i := range x {
		x[i] = g.IntN(ddpConfig.VocabSize)
		y[i] = g.IntN(ddpConfig.VocabSize)
	}
	return x, y
}

// testDataParallel trains 20 steps with DataParallel, each rank on its
// rowsPerRank rows of a full batch, and on rank 0 a reference model alone
// on the full batch: the loss of every step (mean over the ranks) and the
// final weights must agree within 1e-5 relative.
func testDataParallel(t testing.TB, c *Comm) { testDataParallelWith(t, c, false) }

// testDataParallelCopies is testDataParallel without gradient buffers:
// every gradient in its own storage, copied into the buckets and back.
func testDataParallelCopies(t testing.TB, c *Comm) { testDataParallelWith(t, c, true) }

func testDataParallelWith(t testing.TB, c *Comm, copies bool) {
	const steps, rowsPerRank = 20, 3
	r, n := c.Rank(), c.WorldSize()
	T := ddpConfig.BlockSize
	// Different initial weights on every rank: NewDataParallel makes them
	// rank 0's. The model lives on the default device (a GPU in the NCCL
	// tests), the reference on the same.
	model := nn.NewGPTWith(ddpConfig, tensor.NewGenerator(uint64(7+r)))
	dp, err := newDataParallel(c, model.Parameters(), DataParallelConfig{BucketBytes: 8 << 10}, copies)
	if err != nil {
		t.Fatalf("rank %d: NewDataParallel: %v", r, err)
	}
	if len(dp.Buckets()) < 2 {
		t.Fatalf("rank %d: 8 KiB buckets gave %d buckets, want several", r, len(dp.Buckets()))
	}
	cfg := optim.AdamWConfig{LR: 1e-3, Beta1: 0.9, Beta2: 0.99, Eps: 1e-8, WeightDecay: 0.1}
	opt := optim.NewAdamW(model.Parameters(), cfg)
	var ref *nn.GPT
	var refOpt *optim.AdamW
	if r == 0 {
		ref = nn.NewGPTWith(ddpConfig, tensor.NewGenerator(99))
		for i, p := range ref.Parameters() {
			p.Detach().CopyFrom(model.Parameters()[i])
		}
		refOpt = optim.NewAdamW(ref.Parameters(), cfg)
	}
	for step := range steps {
		x, y := ddpBatch(step, n*rowsPerRank)
		lo, hi := r*rowsPerRank*T, (r+1)*rowsPerRank*T
		l := model.Loss(tensor.FromInts(x[lo:hi], rowsPerRank, T), tensor.FromInts(y[lo:hi], rowsPerRank, T))
		l.Backward()
		loss := []float32{l.Item()}
		if err := c.AllReduceFloat32s(loss, Mean); err != nil {
			t.Fatalf("rank %d: loss AllReduce: %v", r, err)
		}
		if err := dp.SyncGrads(); err != nil {
			t.Fatalf("rank %d: SyncGrads: %v", r, err)
		}
		opt.Step()
		opt.ZeroGrad()
		if r != 0 {
			continue
		}
		rl := ref.Loss(tensor.FromInts(x, n*rowsPerRank, T), tensor.FromInts(y, n*rowsPerRank, T))
		rl.Backward()
		refOpt.Step()
		refOpt.ZeroGrad()
		if !approx.Scalar(float64(loss[0]), float64(rl.Item()), 1e-5, 1e-8) {
			t.Errorf("step %d: mean loss of %d ranks %v, one process on the doubled batch %v (1e-5 relative)", step, n, loss[0], rl.Item())
		}
	}
	// Every rank ends with rank 0's weights, and rank 0's equal the
	// reference's.
	for i, p := range model.Parameters() {
		w := p.Float32s()
		w0 := append([]float32(nil), w...)
		if err := c.BroadcastFloat32s(w0, 0); err != nil {
			t.Fatalf("rank %d: Broadcast: %v", r, err)
		}
		for j := range w {
			if w[j] != w0[j] {
				t.Fatalf("rank %d: parameter %d element %d = %v, rank 0 has %v: the replicas drifted apart", r, i, j, w[j], w0[j])
			}
		}
		if r == 0 {
			// 1e-5 relative to the parameter's largest magnitude: an element
			// near zero that Adam moved by lr·g/√v carries the rounding of
			// a tiny g at full size.
			rw := ref.Parameters()[i].Float32s()
			var scale float64
			for _, v := range rw {
				scale = math.Max(scale, math.Abs(float64(v)))
			}
			for j := range w {
				if !approx.Scalar(float64(w[j]), float64(rw[j]), 0, 1e-5*scale) {
					t.Fatalf("parameter %d element %d: %v after data-parallel training, %v alone (1e-5 relative to the largest, %v)", i, j, w[j], rw[j], scale)
				}
			}
		}
	}
}

// bodies are the tests that run on every rank of a group.
var bodies = []struct {
	name string
	f    func(testing.TB, *Comm)
}{
	{"AllReduce", testAllReduce},
	{"Broadcast", testBroadcast},
	{"AllGatherAgree", testAllGatherAgree},
	{"DataParallel", testDataParallel},
	{"DataParallelCopies", testDataParallelCopies},
}
