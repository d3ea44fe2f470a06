package dist

import (
	"fmt"

	"github.com/wickml/wick/tensor"
)

// DefaultBucketBytes is the size of the gradient buckets of DataParallel
// when DataParallelConfig.BucketBytes is zero: 25 MiB, the default of
// PyTorch's DistributedDataParallel (bucket_cap_mb).
const DefaultBucketBytes = 25 << 20

// DataParallelConfig holds the options of NewDataParallel.
type DataParallelConfig struct {
	// BucketBytes caps the gradient bytes reduced by one collective;
	// zero means DefaultBucketBytes. A parameter larger than the cap gets
	// a bucket of its own.
	BucketBytes int
}

// DataParallel keeps the replicas of a model on the ranks of a Comm equal:
// NewDataParallel broadcasts the parameters from rank 0, and SyncGrads,
// called on every rank after backward and before the optimizer step,
// replaces each gradient by its mean over the ranks. With each rank
// training on its own batch of B rows, the step then equals one process's
// step on the B·WorldSize rows together (for losses that are means over
// rows). The optimizer stays per rank and, given equal gradients, stays
// equal.
//
// A DataParallel is used from one goroutine at a time.
type DataParallel struct {
	comm    *Comm
	params  []*tensor.Tensor
	buckets [][]int // parameter indices, last parameters first
	buf     []float32
}

// NewDataParallel checks that every rank passes parameters of the same
// shapes, in the same order, then copies rank 0's values into every
// rank's parameters. It returns an error naming the first parameter whose
// shape differs, or the transport's error.
//
// NewDataParallel panics if a parameter is nil or not Float32, or
// cfg.BucketBytes is negative.
func NewDataParallel(c *Comm, params []*tensor.Tensor, cfg DataParallelConfig) (*DataParallel, error) {
	if cfg.BucketBytes < 0 {
		panic(&tensor.Error{Op: "dist.NewDataParallel", Msg: fmt.Sprintf("BucketBytes %d is negative", cfg.BucketBytes)})
	}
	capBytes := cfg.BucketBytes
	if capBytes == 0 {
		capBytes = DefaultBucketBytes
	}
	shapes := make([]string, len(params))
	for i, p := range params {
		if p == nil || p.DType() != tensor.Float32 {
			panic(&tensor.Error{Op: "dist.NewDataParallel", Msg: fmt.Sprintf("parameter %d is nil or not Float32", i)})
		}
		shapes[i] = fmt.Sprint(p.Shape())
	}
	fields := map[string]string{"parameters": fmt.Sprint(len(params))}
	for i, s := range shapes {
		fields[fmt.Sprintf("parameter %04d shape", i)] = s
	}
	if err := c.Agree(fields); err != nil {
		return nil, fmt.Errorf("dist: NewDataParallel: %w", err)
	}
	d := &DataParallel{comm: c, params: params, buckets: planBuckets(params, capBytes/4)}
	maxLen := 0
	for _, b := range d.buckets {
		n := len(b)
		for _, i := range b {
			n += params[i].Numel()
		}
		maxLen = max(maxLen, n)
	}
	d.buf = make([]float32, maxLen)
	if err := d.BroadcastParams(); err != nil {
		return nil, err
	}
	return d, nil
}

// planBuckets groups the parameters, from the last to the first (the order
// in which backward finishes their gradients), into buckets of at most
// capElems elements; a larger parameter is a bucket by itself.
func planBuckets(params []*tensor.Tensor, capElems int) [][]int {
	var buckets [][]int
	var cur []int
	n := 0
	for i := len(params) - 1; i >= 0; i-- {
		m := params[i].Numel()
		if len(cur) > 0 && n+m > capElems {
			buckets = append(buckets, cur)
			cur, n = nil, 0
		}
		cur = append(cur, i)
		n += m
	}
	if len(cur) > 0 {
		buckets = append(buckets, cur)
	}
	return buckets
}

// Buckets returns the parameter indices of each bucket, in the order they
// are reduced.
func (d *DataParallel) Buckets() [][]int {
	out := make([][]int, len(d.buckets))
	for i, b := range d.buckets {
		out[i] = append([]int(nil), b...)
	}
	return out
}

// Comm returns the Comm the model is replicated over.
func (d *DataParallel) Comm() *Comm { return d.comm }

// BroadcastParams copies rank 0's parameters into every rank's, bucket by
// bucket. NewDataParallel calls it; call it again after loading weights on
// rank 0 only.
func (d *DataParallel) BroadcastParams() error {
	for _, b := range d.buckets {
		buf := d.buf[:0]
		for _, i := range b {
			buf = append(buf, read(d.params[i])...)
		}
		if err := d.comm.BroadcastFloat32s(buf, 0); err != nil {
			return err
		}
		if d.comm.rank == 0 {
			continue
		}
		off := 0
		for _, i := range b {
			n := d.params[i].Numel()
			write(d.params[i], buf[off:off+n])
			off += n
		}
	}
	return nil
}

// SyncGrads replaces every parameter's gradient by its mean over the
// ranks, one collective per bucket. A parameter without a gradient counts
// as zeros; it gets the mean when another rank had a gradient for it and
// stays without one when no rank had. Gradients are overwritten in place
// where they are contiguous CPU tensors and replaced otherwise.
func (d *DataParallel) SyncGrads() error {
	if d.comm.size == 1 {
		return nil
	}
	scale := 1 / float32(d.comm.size)
	for _, b := range d.buckets {
		buf := d.buf[:0]
		for _, i := range b {
			p := d.params[i]
			if g := p.Grad(); g != nil {
				buf = append(buf, read(g)...)
			} else {
				buf = append(buf, make([]float32, p.Numel())...)
			}
		}
		flags := len(buf)
		for _, i := range b {
			if d.params[i].Grad() != nil {
				buf = append(buf, 1)
			} else {
				buf = append(buf, 0)
			}
		}
		if err := d.comm.AllReduceFloat32s(buf, Sum); err != nil {
			return err
		}
		off := 0
		for k, i := range b {
			p := d.params[i]
			n := p.Numel()
			seg := buf[off : off+n]
			off += n
			if buf[flags+k] == 0 {
				continue
			}
			if g := p.Grad(); g != nil && g.Device() == tensor.CPU && g.IsContiguous() {
				dst := g.HostFloat32s()
				for j, v := range seg {
					dst[j] = v * scale
				}
				continue
			}
			for j := range seg {
				seg[j] *= scale
			}
			if g := p.Grad(); g != nil {
				write(g, seg)
			} else {
				p.SetGrad(tensor.New(append([]float32(nil), seg...), p.Shape()...).To(p.Device()))
			}
		}
	}
	return nil
}

// read returns t's elements: its storage for a contiguous CPU tensor, a
// copy otherwise.
func read(t *tensor.Tensor) []float32 {
	if t.Device() == tensor.CPU && t.IsContiguous() {
		return t.HostFloat32s()
	}
	return t.Float32s()
}

// write copies v into t in place.
func write(t *tensor.Tensor, v []float32) {
	if t.Device() == tensor.CPU && t.IsContiguous() {
		copy(t.HostFloat32s(), v)
		return
	}
	if len(v) > 0 {
		t.Detach().CopyFrom(tensor.New(v, t.Shape()...)) // parameters too: not recorded
	}
}

// String describes the replication, such as "2 ranks, 26 parameters in 1 buckets".
func (d *DataParallel) String() string {
	return fmt.Sprintf("%d ranks, %d parameters in %d buckets", d.comm.size, len(d.params), len(d.buckets))
}
