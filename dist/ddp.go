package dist

import (
	"fmt"
	"strings"

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
// The gradients of CPU parameters live in the buckets, as with PyTorch's
// gradient_as_bucket_view: NewDataParallel makes each parameter's slot in
// its bucket the parameter's gradient buffer (tensor.SetGradBuffer) with
// the scale 1/WorldSize, so Backward writes each gradient, already divided
// by the world size, into its bucket, and SyncGrads sums every bucket in
// place with one collective and no copies. Between Backward and SyncGrads
// a gradient therefore holds this rank's share, g/WorldSize; and a Grad
// tensor kept past the next Backward is overwritten by it. The gradients
// of GPU parameters (one GPU per rank) are copied into one buffer per
// bucket on the GPU, reduced there (NCCL, in a build with -tags cuda,mpi)
// and copied back.
//
// A DataParallel is used from one goroutine at a time.
type DataParallel struct {
	comm    *Comm
	params  []*tensor.Tensor
	buckets []*bucket
	copies  bool // no gradient buffers: every gradient copied in and out (a benchmark's baseline)
}

// bucket is the parameters whose gradients one collective reduces
// together, all on one device.
type bucket struct {
	idx []int // parameter indices, last parameters first
	dev tensor.Device
	n   int // gradient elements

	// On the CPU: the gradients of idx one after the other, then one flag
	// per parameter (whether the rank has a gradient for it); views are
	// the gradients' slots as tensors, the parameters' gradient buffers.
	buf   []float32
	views []*tensor.Tensor

	// On a GPU: the gradients of idx, one after the other, and the flags.
	flat  *tensor.Tensor
	flags []float32
}

// NewDataParallel checks that every rank passes parameters of the same
// shapes, in the same order, then copies rank 0's values into every
// rank's parameters. It returns an error naming the first parameter whose
// shape differs, or the transport's error. With more than one rank, it
// makes the CPU parameters' bucket slots their gradient buffers (see
// DataParallel).
//
// NewDataParallel panics if a parameter is nil or not Float32, or
// cfg.BucketBytes is negative.
func NewDataParallel(c *Comm, params []*tensor.Tensor, cfg DataParallelConfig) (*DataParallel, error) {
	return newDataParallel(c, params, cfg, false)
}

func newDataParallel(c *Comm, params []*tensor.Tensor, cfg DataParallelConfig, copies bool) (*DataParallel, error) {
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
		kind, _, _ := strings.Cut(params[i].Device().String(), ":")
		fields[fmt.Sprintf("parameter %04d device", i)] = kind // cuda:0 on one rank is cuda:1 on the next
	}
	if err := c.Agree(fields); err != nil {
		return nil, fmt.Errorf("dist: NewDataParallel: %w", err)
	}
	d := &DataParallel{comm: c, params: params, copies: copies}
	scale := 1 / float32(c.size)
	for _, idx := range planBuckets(params, capBytes/4) {
		b := &bucket{idx: idx, dev: params[idx[0]].Device()}
		for _, i := range idx {
			b.n += params[i].Numel()
		}
		if b.dev != tensor.CPU {
			b.flat = tensor.Zeros(b.n).To(b.dev)
			b.flags = make([]float32, len(idx))
			d.buckets = append(d.buckets, b)
			continue
		}
		b.buf = make([]float32, b.n+len(idx))
		off := 0
		for _, i := range idx {
			p := params[i]
			m := p.Numel()
			v := tensor.FromHostFloat32s(b.buf[off:off+m], p.Shape()...)
			off += m
			b.views = append(b.views, v)
			if c.size > 1 && !copies && p.IsRequiringGrad() && p.IsLeaf() {
				p.SetGradBuffer(v, scale)
			}
		}
		d.buckets = append(d.buckets, b)
	}
	if err := d.BroadcastParams(); err != nil {
		return nil, err
	}
	return d, nil
}

// planBuckets groups the parameters, from the last to the first (the order
// in which backward finishes their gradients), into buckets of at most
// capElems elements on one device; a larger parameter is a bucket by
// itself.
func planBuckets(params []*tensor.Tensor, capElems int) [][]int {
	sizes := make([]int, len(params))
	devs := make([]tensor.Device, len(params))
	for i, p := range params {
		sizes[i], devs[i] = p.Numel(), p.Device()
	}
	return planBucketsOf(sizes, devs, capElems)
}

// planBucketsOf is planBuckets on the parameters' element counts and
// devices.
func planBucketsOf(sizes []int, devs []tensor.Device, capElems int) [][]int {
	var buckets [][]int
	var cur []int
	n := 0
	for i := len(sizes) - 1; i >= 0; i-- {
		m := sizes[i]
		if len(cur) > 0 && (n+m > capElems || devs[i] != devs[cur[0]]) {
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
		out[i] = append([]int(nil), b.idx...)
	}
	return out
}

// Comm returns the Comm the model is replicated over.
func (d *DataParallel) Comm() *Comm { return d.comm }

// BroadcastParams copies rank 0's parameters into every rank's, bucket by
// bucket. NewDataParallel calls it; call it again after loading weights on
// rank 0 only.
func (d *DataParallel) BroadcastParams() error {
	if d.comm.size == 1 {
		return nil
	}
	for _, b := range d.buckets {
		if b.flat != nil {
			if err := d.broadcastDevice(b); err != nil {
				return err
			}
			continue
		}
		// not through b.buf, which holds the gradients
		buf := make([]float32, 0, b.n)
		for _, i := range b.idx {
			buf = append(buf, read(d.params[i])...)
		}
		if err := d.comm.BroadcastFloat32s(buf, 0); err != nil {
			return err
		}
		if d.comm.rank == 0 {
			continue
		}
		off := 0
		for _, i := range b.idx {
			n := d.params[i].Numel()
			write(d.params[i], buf[off:off+n])
			off += n
		}
	}
	return nil
}

// broadcastDevice broadcasts the parameters of a GPU bucket through its
// buffer on the GPU.
func (d *DataParallel) broadcastDevice(b *bucket) error {
	segs := d.segments(b)
	for k, i := range b.idx {
		segs[k].CopyFrom(d.params[i])
	}
	if err := d.comm.Broadcast(b.flat, 0); err != nil {
		return err
	}
	if d.comm.rank != 0 {
		for k, i := range b.idx {
			d.params[i].Detach().CopyFrom(segs[k]) // parameters too: not recorded
		}
	}
	return nil
}

// segments returns the views of a GPU bucket's buffer that hold each of its
// parameters, shaped like them.
func (d *DataParallel) segments(b *bucket) []*tensor.Tensor {
	segs := make([]*tensor.Tensor, len(b.idx))
	off := 0
	for k, i := range b.idx {
		p := d.params[i]
		n := p.Numel()
		segs[k] = b.flat.Narrow(0, off, n).View(p.Shape()...)
		off += n
	}
	return segs
}

// SyncGrads replaces every parameter's gradient by its mean over the
// ranks, one collective per bucket. A parameter without a gradient counts
// as zeros; it gets the mean when another rank had a gradient for it and
// stays without one when no rank had. A CPU gradient that Backward wrote
// into its bucket is summed there in place (it was divided by the world
// size as it was written); a gradient set otherwise (SetGrad) is copied
// into the bucket and the mean copied back into it, in place where it is a
// contiguous tensor; one that only other ranks had becomes the bucket
// slot.
func (d *DataParallel) SyncGrads() error {
	if d.comm.size == 1 {
		return nil
	}
	scale := 1 / float32(d.comm.size)
	for _, b := range d.buckets {
		var err error
		if b.flat != nil {
			err = d.syncDevice(b, scale)
		} else {
			err = d.syncHost(b, scale)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// syncHost reduces a CPU bucket in place: the gradients and every
// parameter's flag in one collective.
func (d *DataParallel) syncHost(b *bucket, scale float32) error {
	flags := b.buf[b.n:]
	off := 0
	for k, i := range b.idx {
		p := d.params[i]
		m := p.Numel()
		seg := b.buf[off : off+m]
		off += m
		switch g := p.Grad(); {
		case g == b.views[k]: // written by Backward, scaled
			flags[k] = 1
		case g == nil:
			clear(seg)
			flags[k] = 0
		default:
			d.comm.scaleInto(seg, read(g), scale)
			flags[k] = 1
		}
	}
	if err := d.comm.AllReduceFloat32s(b.buf, Sum); err != nil {
		return err
	}
	off = 0
	for k, i := range b.idx {
		p := d.params[i]
		m := p.Numel()
		seg := b.buf[off : off+m]
		off += m
		if flags[k] == 0 {
			continue
		}
		switch g := p.Grad(); {
		case g == b.views[k]:
		case g == nil:
			p.SetGrad(b.views[k])
		default:
			write(g, seg)
		}
	}
	return nil
}

// syncDevice reduces a GPU bucket through its buffer on the GPU.
func (d *DataParallel) syncDevice(b *bucket, scale float32) error {
	segs := d.segments(b)
	for k, i := range b.idx {
		if g := d.params[i].Grad(); g != nil {
			segs[k].CopyFrom(g)
			b.flags[k] = 1
		} else {
			segs[k].Fill_(0)
			b.flags[k] = 0
		}
	}
	if err := d.comm.AllReduceFloat32s(b.flags, Sum); err != nil {
		return err
	}
	if err := d.comm.AllReduce(b.flat, Sum); err != nil {
		return err
	}
	scaleInPlace(b.flat, scale)
	for k, i := range b.idx {
		if b.flags[k] == 0 {
			continue
		}
		p := d.params[i]
		if g := p.Grad(); g != nil {
			g.Detach().CopyFrom(segs[k])
		} else {
			p.SetGrad(segs[k].Clone())
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
