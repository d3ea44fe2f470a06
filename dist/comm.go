package dist

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/wickml/wick/tensor"
)

// Op is the reduction of AllReduce.
type Op int

// The reductions.
const (
	Sum  Op = iota // element-wise sum over the ranks
	Mean           // element-wise sum divided by the world size
)

// String returns "Sum", "Mean" or "Op(N)".
func (op Op) String() string {
	switch op {
	case Sum:
		return "Sum"
	case Mean:
		return "Mean"
	}
	return "Op(" + strconv.Itoa(int(op)) + ")"
}

// DefaultTimeout is how long a collective waits for the other ranks when
// neither Config.Timeout nor $WICK_DIST_TIMEOUT says otherwise.
const DefaultTimeout = 10 * time.Minute

// Config holds the options of InitWith.
type Config struct {
	// Timeout bounds every collective: past it the call returns an error
	// and the Comm is broken. Zero means $WICK_DIST_TIMEOUT (a Go
	// duration such as "90s") or DefaultTimeout; negative means wait
	// forever.
	Timeout time.Duration
}

// transport moves bytes between the ranks: MPI (mpi.go), nothing (stub.go)
// or goroutines of this process (local.go). Its methods are called from
// one goroutine at a time.
type transport interface {
	allReduceSum(buf []float32) error
	broadcast(buf []float32, root int) error
	broadcastBytes(buf []byte, root int) error
	allGather(b []byte) ([][]byte, error)
	barrier() error
	finalize() error
	abort(code int)
}

// Comm is this process's membership in a job of WorldSize ranks. Its
// methods may be called from any goroutine (see the package comment).
type Comm struct {
	tr        transport
	rank      int
	size      int
	localRank int
	backend   string
	timeout   time.Duration

	mu   sync.Mutex // serialises collectives
	err  error      // set once the Comm is broken (timeout) or finalized
	done bool

	dev devState // NCCL's communicator for GPU tensors (device.go)
}

// Rank returns this process's rank, 0 ≤ Rank < WorldSize.
func (c *Comm) Rank() int { return c.rank }

// WorldSize returns the number of ranks in the job.
func (c *Comm) WorldSize() int { return c.size }

// LocalRank returns this process's rank among the ranks on its node (the
// GPU it should use).
func (c *Comm) LocalRank() int { return c.localRank }

// Backend describes the transport, such as "mpi (Open MPI v4.1.4)",
// "single process" or "local goroutines".
func (c *Comm) Backend() string { return c.backend }

// Timeout returns how long a collective waits for the other ranks
// (negative: forever).
func (c *Comm) Timeout() time.Duration { return c.timeout }

// Init joins the job set up by the launcher (mpirun, mpiexec, srun) with
// the default Config. Without the mpi build tag it returns a one-process
// Comm, or an error naming the tag when the environment says the process
// is one of several ranks. Init returns the same Comm when called again,
// and an error after Finalize.
func Init() (*Comm, error) { return InitWith(Config{}) }

var (
	worldMu   sync.Mutex
	world     *Comm
	worldDone bool
)

// InitWith is Init with options.
func InitWith(cfg Config) (*Comm, error) {
	worldMu.Lock()
	defer worldMu.Unlock()
	if worldDone {
		return nil, errors.New("dist: Init after Finalize: a process joins the job once")
	}
	if world != nil {
		return world, nil
	}
	timeout, err := resolveTimeout(cfg.Timeout)
	if err != nil {
		return nil, err
	}
	c, err := initWorld()
	if err != nil {
		return nil, err
	}
	c.timeout = timeout
	if st, ok := c.tr.(selfTimed); ok {
		st.setTimeout(timeout)
	}
	world = c
	return c, nil
}

func resolveTimeout(d time.Duration) (time.Duration, error) {
	if d != 0 {
		return d, nil
	}
	if s := os.Getenv("WICK_DIST_TIMEOUT"); s != "" {
		v, err := time.ParseDuration(s)
		if err != nil || v == 0 {
			return 0, fmt.Errorf("dist: $WICK_DIST_TIMEOUT=%q is not a non-zero Go duration such as 90s", s)
		}
		return v, nil
	}
	return DefaultTimeout, nil
}

// launcherSize returns the world size that the launcher's environment
// announces, and the variable that said so (0, "" when none does).
func launcherSize() (int, string) {
	for _, name := range []string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS"} {
		if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
			return v, name
		}
	}
	return 0, ""
}

// call runs f, a collective named op, under the Comm's lock and timeout.
func (c *Comm) call(op string, f func() error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return fmt.Errorf("dist: %s: %w", op, c.err)
	}
	if c.size == 1 {
		return f()
	}
	if _, ok := c.tr.(selfTimed); ok || c.timeout < 0 {
		err := f()
		if errors.Is(err, errTimeout) {
			c.err = c.timeoutError()
			return fmt.Errorf("dist: %s: %w", op, c.err)
		}
		if err != nil {
			return fmt.Errorf("dist: %s on rank %d: %w", op, c.rank, err)
		}
		return nil
	}
	done := make(chan error, 1)
	go func() { done <- f() }()
	timer := time.NewTimer(c.timeout)
	defer timer.Stop()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("dist: %s on rank %d: %w", op, c.rank, err)
		}
		return nil
	case <-timer.C:
		c.err = c.timeoutError()
		return fmt.Errorf("dist: %s: %w", op, c.err)
	}
}

// errTimeout is a selfTimed transport's error for a wait past the timeout.
var errTimeout = errors.New("timeout")

// selfTimed is a transport that bounds its own waits by the Comm's
// timeout, so that call needs no goroutine and timer per collective.
type selfTimed interface{ setTimeout(time.Duration) }

func (c *Comm) timeoutError() error {
	return fmt.Errorf("rank %d waited %v for the other ranks (did one die or stop calling collectives?); the job cannot continue", c.rank, c.timeout)
}

// checkTensor panics unless t is a Float32 tensor.
func checkTensor(op string, t *tensor.Tensor) {
	if t == nil {
		panic(&tensor.Error{Op: op, Msg: "nil tensor"})
	}
	if t.DType() != tensor.Float32 {
		panic(&tensor.Error{Op: op, Msg: fmt.Sprintf("want a Float32 tensor, got %s of shape %v", t.DType(), t.Shape())})
	}
}

// inPlace calls f with t's elements: its own storage when t is a contiguous
// CPU tensor, else a host copy that is copied back when f succeeds and
// write is set.
func inPlace(t *tensor.Tensor, write bool, f func([]float32) error) error {
	if t.Device() == tensor.CPU && t.IsContiguous() {
		return f(t.HostFloat32s())
	}
	buf := t.Float32s()
	if err := f(buf); err != nil {
		return err
	}
	if write && len(buf) > 0 {
		t.Detach().CopyFrom(tensor.New(buf, t.Shape()...)) // parameters too: not recorded
	}
	return nil
}

// onDevice calls f with t, or with a contiguous copy of t that is copied
// back when f succeeds and write is set.
func onDevice(t *tensor.Tensor, write bool, f func(*tensor.Tensor) error) error {
	if t.IsContiguous() {
		return f(t)
	}
	tmp := t.Detach().Contiguous()
	if err := f(tmp); err != nil {
		return err
	}
	if write {
		t.Detach().CopyFrom(tmp)
	}
	return nil
}

// scaleInPlace multiplies t's elements by s, on t's device.
func scaleInPlace(t *tensor.Tensor, s float32) {
	d := t.Detach()
	d.CopyFrom(d.MulScalar(s))
}

// AllReduce replaces t, on every rank, by the element-wise sum (Sum) or
// mean (Mean) of t over the ranks. Every rank must pass a tensor of the
// same shape. Sums of integers held exactly in float32 are exact. On a GPU,
// in a build with -tags cuda,mpi, NCCL reduces t in place on the GPU's
// compute stream (its first use sets NCCL up: see DeviceBackend). Other
// tensors that are not contiguous CPU tensors go through a host copy.
//
// AllReduce panics if t is nil or not Float32, or op is not Sum or Mean. It
// returns an error when the transport fails or the timeout passes.
func (c *Comm) AllReduce(t *tensor.Tensor, op Op) error {
	checkTensor("dist.AllReduce", t)
	if op != Sum && op != Mean {
		panic(&tensor.Error{Op: "dist.AllReduce", Msg: fmt.Sprintf("unknown reduction %v (want Sum or Mean)", op)})
	}
	if dc, err := c.gpu("dist.AllReduce", t.Device()); err != nil {
		return err
	} else if dc != nil {
		return onDevice(t, true, func(x *tensor.Tensor) error {
			if err := c.call("AllReduce", func() error { return dc.allReduceSum(x) }); err != nil {
				return err
			}
			if op == Mean && c.size > 1 {
				scaleInPlace(x, 1/float32(c.size))
			}
			return nil
		})
	}
	return inPlace(t, true, func(buf []float32) error { return c.AllReduceFloat32s(buf, op) })
}

// AllReduceFloat32s is AllReduce on a slice. It panics if op is not Sum or
// Mean.
func (c *Comm) AllReduceFloat32s(buf []float32, op Op) error {
	if op != Sum && op != Mean {
		panic(&tensor.Error{Op: "dist.AllReduceFloat32s", Msg: fmt.Sprintf("unknown reduction %v (want Sum or Mean)", op)})
	}
	if err := c.call("AllReduce", func() error { return c.tr.allReduceSum(buf) }); err != nil {
		return err
	}
	if op == Mean && c.size > 1 {
		c.scaleInto(buf, buf, 1/float32(c.size))
	}
	return nil
}

// scaler is a transport that scales float32s in native, vectorised code
// (mpi.go).
type scaler interface {
	scale(dst, src []float32, s float32)
}

// scaleInto sets dst[i] = src[i]·s; dst and src have the same length and
// are the same slice or do not overlap.
func (c *Comm) scaleInto(dst, src []float32, s float32) {
	if sc, ok := c.tr.(scaler); ok && len(src) > 0 {
		sc.scale(dst, src, s)
		return
	}
	for i, v := range src {
		dst[i] = v * s
	}
}

// Broadcast replaces t, on every rank, by rank root's t. Every rank must
// pass a tensor of the same shape. GPU tensors go through NCCL as in
// AllReduce.
//
// Broadcast panics if t is nil or not Float32, or root is not a rank. It
// returns an error when the transport fails or the timeout passes.
func (c *Comm) Broadcast(t *tensor.Tensor, root int) error {
	checkTensor("dist.Broadcast", t)
	c.checkRoot("dist.Broadcast", root)
	if dc, err := c.gpu("dist.Broadcast", t.Device()); err != nil {
		return err
	} else if dc != nil {
		return onDevice(t, c.rank != root, func(x *tensor.Tensor) error {
			return c.call("Broadcast", func() error { return dc.broadcast(x, root) })
		})
	}
	return inPlace(t, c.rank != root, func(buf []float32) error { return c.BroadcastFloat32s(buf, root) })
}

// BroadcastFloat32s is Broadcast on a slice. It panics if root is not a
// rank.
func (c *Comm) BroadcastFloat32s(buf []float32, root int) error {
	c.checkRoot("dist.BroadcastFloat32s", root)
	return c.call("Broadcast", func() error { return c.tr.broadcast(buf, root) })
}

// BroadcastBytes replaces b, on every rank, by rank root's b; every rank
// must pass the same length. It panics if root is not a rank.
func (c *Comm) BroadcastBytes(b []byte, root int) error {
	c.checkRoot("dist.BroadcastBytes", root)
	return c.call("BroadcastBytes", func() error { return c.tr.broadcastBytes(b, root) })
}

func (c *Comm) checkRoot(op string, root int) {
	if root < 0 || root >= c.size {
		panic(&tensor.Error{Op: op, Msg: fmt.Sprintf("root %d is not a rank of a world of %d", root, c.size)})
	}
}

// AllGather returns every rank's b, indexed by rank; the lengths may
// differ.
func (c *Comm) AllGather(b []byte) ([][]byte, error) {
	var out [][]byte
	err := c.call("AllGather", func() error {
		var err error
		out, err = c.tr.allGather(b)
		return err
	})
	return out, err
}

// Barrier returns once every rank has called it.
func (c *Comm) Barrier() error { return c.call("Barrier", c.tr.barrier) }

// Agree returns nil when every rank passed the same fields, and otherwise,
// on every rank, the same error naming the lowest rank and the first field
// (in sorted order) that differ from rank 0's. Use it at start-up to catch
// a rank that runs with another configuration or corpus.
func (c *Comm) Agree(fields map[string]string) error {
	js, err := json.Marshal(fields) // sorted keys
	if err != nil {
		return err
	}
	all, err := c.AllGather(js)
	if err != nil {
		return err
	}
	var ref map[string]string
	if err := json.Unmarshal(all[0], &ref); err != nil {
		return fmt.Errorf("dist: Agree: rank 0 sent %d bytes that are not a fingerprint: %v", len(all[0]), err)
	}
	for r := 1; r < len(all); r++ {
		if bytes.Equal(all[r], all[0]) {
			continue
		}
		var got map[string]string
		if err := json.Unmarshal(all[r], &got); err != nil {
			return fmt.Errorf("dist: Agree: rank %d sent %d bytes that are not a fingerprint: %v", r, len(all[r]), err)
		}
		keys := map[string]bool{}
		for k := range ref {
			keys[k] = true
		}
		for k := range got {
			keys[k] = true
		}
		names := make([]string, 0, len(keys))
		for k := range keys {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			a, aok := ref[k]
			b, bok := got[k]
			if a != b || aok != bok {
				return &MismatchError{Rank: r, Field: k, Value: show(b, bok), Rank0Value: show(a, aok)}
			}
		}
	}
	return nil
}

func show(v string, ok bool) string {
	if !ok {
		return "(missing)"
	}
	return v
}

// MismatchError is Agree's error: rank Rank differs from rank 0 in Field.
type MismatchError struct {
	Rank              int
	Field             string
	Value, Rank0Value string
}

// Error says which rank differs, in what and how.
func (e *MismatchError) Error() string {
	return fmt.Sprintf("rank %d runs with %s=%s but rank 0 with %s=%s: every rank must start with the same configuration and corpus",
		e.Rank, e.Field, e.Value, e.Field, e.Rank0Value)
}

// Finalize leaves the job; every rank must call it (MPI may wait for the
// others). Collectives afterwards return an error. Finalize of a broken
// Comm (past a timeout) returns its error at once without waiting.
func (c *Comm) Finalize() error {
	derr := c.closeDevice()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return nil
	}
	if c.err != nil {
		return fmt.Errorf("dist: Finalize: %w", c.err)
	}
	c.done = true
	c.err = errors.New("the Comm was finalized")
	if c == world {
		worldMu.Lock()
		worldDone = true
		worldMu.Unlock()
	}
	if err := c.tr.finalize(); err != nil {
		return err
	}
	if derr != nil {
		return fmt.Errorf("dist: Finalize: destroying NCCL's communicator: %w", derr)
	}
	return nil
}

// Abort ends every rank of the job with exit status code (MPI_Abort); use
// it when one rank fails and the others cannot learn of it. It does not
// return in an MPI job; in a one-process job it exits; for a local group it
// marks every Comm of the group broken and returns.
func (c *Comm) Abort(code int) { c.tr.abort(code) }
