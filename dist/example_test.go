package dist_test

import (
	"fmt"
	"sync"

	"github.com/wickml/wick/dist"
	"github.com/wickml/wick/tensor"
)

// Two ranks, here goroutines of one process, each holding its own tensor:
// AllReduce leaves the sum on both. Under mpirun the same code runs with
// the Comm of dist.Init, one rank per process.
func ExampleComm_AllReduce() {
	comms, err := dist.NewLocalGroup(2, dist.Config{})
	if err != nil {
		panic(err)
	}
	out := make([]string, 2)
	var wg sync.WaitGroup
	for _, c := range comms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := tensor.New([]float32{1, 2, 3}).MulScalar(float32(c.Rank() + 1)) // rank 0: 1 2 3, rank 1: 2 4 6
			if err := c.AllReduce(x, dist.Sum); err != nil {
				panic(err)
			}
			out[c.Rank()] = fmt.Sprint("rank ", c.Rank(), " of ", c.WorldSize(), ": ", x.Float32s())
		}()
	}
	wg.Wait()
	fmt.Println(out[0])
	fmt.Println(out[1])
	// Output:
	// rank 0 of 2: [3 6 9]
	// rank 1 of 2: [3 6 9]
}

// The data-parallel step: after Backward, SyncGrads averages every
// gradient over the ranks, so that each rank's optimizer takes the same
// step.
func ExampleDataParallel() {
	comms, err := dist.NewLocalGroup(2, dist.Config{})
	if err != nil {
		panic(err)
	}
	out := make([]string, 2)
	var wg sync.WaitGroup
	for _, c := range comms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := tensor.Full(float32(10*c.Rank()), 2).RequiresGrad() // made rank 0's (zeros) by NewDataParallel
			dp, err := dist.NewDataParallel(c, []*tensor.Tensor{w}, dist.DataParallelConfig{})
			if err != nil {
				panic(err)
			}
			x := tensor.New([]float32{1, 2}).MulScalar(float32(c.Rank() + 1)) // this rank's batch
			w.Mul(x).Sum().Backward()                                         // gradient: x
			if err := dp.SyncGrads(); err != nil {
				panic(err)
			}
			out[c.Rank()] = fmt.Sprint("rank ", c.Rank(), ": w ", w.Float32s(), ", grad ", w.Grad().Float32s())
		}()
	}
	wg.Wait()
	fmt.Println(out[0])
	fmt.Println(out[1])
	// Output:
	// rank 0: w [0 0], grad [1.5 3]
	// rank 1: w [0 0], grad [1.5 3]
}
