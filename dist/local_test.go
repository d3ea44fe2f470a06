package dist

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wickml/wick/tensor"
)

// runLocal runs f on every rank of a local group of n, each on its own
// goroutine.
func runLocal(t *testing.T, n int, f func(testing.TB, *Comm)) {
	comms, err := NewLocalGroup(n, Config{Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, c := range comms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if t.Failed() {
					c.Abort(1) // release the ranks still waiting for this one
				}
			}()
			f(&goroutineTB{T: t}, c)
		}()
	}
	wg.Wait()
}

// goroutineTB lets a rank's goroutine fail the test: Fatal marks the test
// failed and ends the goroutine.
type goroutineTB struct{ *testing.T }

func (g *goroutineTB) Fatal(args ...any)                 { g.Error(args...); runtimeGoexit() }
func (g *goroutineTB) Fatalf(format string, args ...any) { g.Errorf(format, args...); runtimeGoexit() }

func TestLocalGroup(t *testing.T) {
	for _, n := range []int{1, 2, 3} {
		for _, b := range bodies {
			t.Run(b.name+"/"+string(rune('0'+n)), func(t *testing.T) { runLocal(t, n, b.f) })
		}
	}
}

func TestSingleProcess(t *testing.T) {
	t.Setenv("OMPI_COMM_WORLD_SIZE", "")
	t.Setenv("PMI_SIZE", "")
	t.Setenv("SLURM_STEP_NUM_TASKS", "")
	c := newSingle()
	for _, b := range bodies {
		b.f(t, c)
	}
}

func TestConcurrentTimeoutBreaksTheComm(t *testing.T) {
	comms, err := NewLocalGroup(2, Config{Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	c := comms[0] // rank 1 never joins
	start := time.Now()
	err = c.AllReduce(tensor.Ones(3), Sum)
	if err == nil || !strings.Contains(err.Error(), "waited") {
		t.Fatalf("AllReduce without the other rank: got %v, want a timeout error", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("AllReduce returned after %v, want about the 100ms timeout", d)
	}
	if err := c.Barrier(); err == nil {
		t.Fatal("Barrier on a Comm broken by a timeout returned nil")
	}
	if err := c.Finalize(); err == nil {
		t.Fatal("Finalize of a Comm broken by a timeout returned nil")
	}
	c.Abort(1) // releases the goroutine still waiting for rank 1
}

func TestTimeoutFromEnvironment(t *testing.T) {
	t.Setenv("WICK_DIST_TIMEOUT", "90s")
	comms, err := NewLocalGroup(1, Config{})
	if err != nil || comms[0].Timeout() != 90*time.Second {
		t.Fatalf("WICK_DIST_TIMEOUT=90s: timeout %v, error %v", comms[0].Timeout(), err)
	}
	t.Setenv("WICK_DIST_TIMEOUT", "soon")
	if _, err := NewLocalGroup(1, Config{}); err == nil || !strings.Contains(err.Error(), "WICK_DIST_TIMEOUT") {
		t.Fatalf("WICK_DIST_TIMEOUT=soon: got %v, want an error naming the variable", err)
	}
}

func TestPanics(t *testing.T) {
	c := newSingle()
	for name, f := range map[string]func(){
		"AllReduce Int64":   func() { c.AllReduce(tensor.FromInts([]int{1}), Sum) },
		"AllReduce nil":     func() { c.AllReduce(nil, Sum) },
		"AllReduce bad op":  func() { c.AllReduce(tensor.Ones(1), Op(7)) },
		"Broadcast root":    func() { c.Broadcast(tensor.Ones(1), 1) },
		"NewLocalGroup 0":   func() { NewLocalGroup(0, Config{}) },
		"DataParallel nil":  func() { NewDataParallel(c, []*tensor.Tensor{nil}, DataParallelConfig{}) },
		"DataParallel -cap": func() { NewDataParallel(c, nil, DataParallelConfig{BucketBytes: -1}) },
	} {
		err := tensor.Catch(f)
		if err == nil || !strings.Contains(err.Error(), "dist.") {
			t.Errorf("%s: got %v, want a *tensor.Error naming the dist op", name, err)
		}
	}
}

func TestBuckets(t *testing.T) {
	ps := []*tensor.Tensor{tensor.Zeros(10), tensor.Zeros(5), tensor.Zeros(30), tensor.Zeros(4), tensor.Zeros(4)}
	got := planBuckets(ps, 12)
	want := [][]int{{4, 3}, {2}, {1}, {0}}
	if len(got) != len(want) {
		t.Fatalf("planBuckets = %v, want %v", got, want)
	}
	for i := range want {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("planBuckets = %v, want %v", got, want)
		}
		for j := range want[i] {
			if got[i][j] != want[i][j] {
				t.Fatalf("planBuckets = %v, want %v", got, want)
			}
		}
	}
	if got := planBuckets(ps, DefaultBucketBytes/4); len(got) != 1 || len(got[0]) != 5 {
		t.Fatalf("planBuckets with 25 MiB = %v, want one bucket of all 5", got)
	}
	// A bucket holds parameters of one device: a model split between the
	// CPU and a GPU gets a bucket per run of parameters on one device.
	cpu, gpu := tensor.CPU, tensor.CUDA(0)
	got = planBucketsOf([]int{3, 3, 3, 3, 3}, []tensor.Device{gpu, gpu, cpu, gpu, gpu}, 100)
	if fmt.Sprint(got) != "[[4 3] [2] [1 0]]" {
		t.Fatalf("planBucketsOf across devices = %v, want [[4 3] [2] [1 0]]", got)
	}
	got = planBucketsOf([]int{3, 3, 3, 3}, []tensor.Device{gpu, gpu, gpu, gpu}, 6)
	if fmt.Sprint(got) != "[[3 2] [1 0]]" {
		t.Fatalf("planBucketsOf on a GPU with a cap of 6 = %v, want [[3 2] [1 0]]", got)
	}
}

func TestConcurrentMissingGradients(t *testing.T) {
	// With gradient buffers and without: the gradients here are set by
	// hand, so they are copied in and out either way, but a gradient that
	// only the other rank had becomes the bucket slot.
	for _, copies := range []bool{false, true} {
		t.Run(fmt.Sprint("copies=", copies), func(t *testing.T) { testMissingGradients(t, copies) })
	}
}

func testMissingGradients(t *testing.T, copies bool) {
	runLocal(t, 2, func(t testing.TB, c *Comm) {
		a := tensor.Zeros(2).RequiresGrad()
		b := tensor.Zeros(3).RequiresGrad()
		z := tensor.Zeros(1).RequiresGrad()
		zb := tensor.Zeros(4).RequiresGrad()
		m := tensor.Zeros(2, 2).RequiresGrad()
		dp, err := newDataParallel(c, []*tensor.Tensor{a, b, z, zb, m}, DataParallelConfig{}, copies)
		if err != nil {
			t.Fatal(err)
		}
		a.SetGrad(tensor.Full(float32(c.Rank()+1), 2)) // 1 and 2: mean 1.5
		if c.Rank() == 1 {
			b.SetGrad(tensor.Full(4, 3)) // mean 2 on both ranks
		}
		// m's gradient: a transposed view on rank 1 (mean of [[0 2] [1 3]]
		// and [[0 1] [2 3]]ᵀ: [[0 2] [1 3]]), contiguous on rank 0
		if c.Rank() == 1 {
			m.SetGrad(tensor.New([]float32{0, 1, 2, 3}, 2, 2).T())
		} else {
			m.SetGrad(tensor.New([]float32{0, 2, 1, 3}, 2, 2))
		}
		if err := dp.SyncGrads(); err != nil {
			t.Fatal(err)
		}
		if g := m.Grad().Float32s(); fmt.Sprint(g) != "[0 2 1 3]" {
			t.Errorf("rank %d: m's grad %v, want [0 2 1 3]", c.Rank(), g)
		}
		if g := a.Grad().Float32s(); g[0] != 1.5 || g[1] != 1.5 {
			t.Errorf("rank %d: a's grad %v, want [1.5 1.5]", c.Rank(), g)
		}
		if b.Grad() == nil || b.Grad().Float32s()[2] != 2 {
			t.Errorf("rank %d: b's grad %v, want 2s (rank 1's 4s averaged with rank 0's none)", c.Rank(), b.Grad())
		}
		if z.Grad() != nil || zb.Grad() != nil {
			t.Errorf("rank %d: z, zb have grads %v, %v though no rank had one", c.Rank(), z.Grad(), zb.Grad())
		}
	})
}
