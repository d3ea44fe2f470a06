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

// inPlaceMin is the element count from which a CPU parameter's gradient is
// reduced in its own storage (one collective of its own, then scaled while
// it is still in the cache) rather than copied into its bucket's buffer and
// back: the copies of a large gradient cost more than a collective's
// latency (scripts/bench_dist.sh).
const inPlaceMin = 16 << 10

// DataParallel keeps the replicas of a model on the ranks of a Comm equal:
// NewDataParallel broadcasts the parameters from rank 0, and SyncGrads,
// called on every rank after backward and before the optimizer step,
// replaces each gradient by its mean over the ranks. With each rank
// training on its own batch of B rows, the step then equals one process's
// step on the B·WorldSize rows together (for losses that are means over
// rows). The optimizer stays per rank and, given equal gradients, stays
// equal.
//
// The parameters may live on the CPU or on a GPU (one GPU per rank): the
// gradients of GPU parameters are gathered into one buffer per bucket on
// the GPU and reduced there (NCCL, in a build with -tags cuda,mpi).
//
// A DataParallel is used from one goroutine at a time.
type DataParallel struct {
	comm       *Comm
	params     []*tensor.Tensor
	buckets    []*bucket
	inPlaceMin int // see inPlaceMin
}

// bucket is the parameters whose gradients one step of SyncGrads reduces
// together, all on one device.
type bucket struct {
	idx []int // parameter indices, last parameters first
	dev tensor.Device

	// On the CPU: the parameters of idx (positions in idx) reduced in
	// their own storage, and those copied through buf, which holds their
	// gradients and then one flag per parameter of idx (whether the rank
	// has a gradient for it).
	inPlace, packed []int
	buf             []float32

	// On a GPU: the gradients of idx, one after the other, and the flags.
	flat  *tensor.Tensor
	flags []float32
}

// NewDataParallel checks that every rank passes parameters of the same
// shapes, in the same order, then copies rank 0's values into every
// rank's parameters. It returns an error naming the first parameter whose
// shape differs, or the transport's error.
//
// NewDataParallel panics if a parameter is nil or not Float32, or
// cfg.BucketBytes is negative.
func NewDataParallel(c *Comm, params []*tensor.Tensor, cfg DataParallelConfig) (*DataParallel, error) {
	return newDataParallel(c, params, cfg, inPlaceMin)
}

func newDataParallel(c *Comm, params []*tensor.Tensor, cfg DataParallelConfig, inPlace int) (*DataParallel, error) {
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
	d := &DataParallel{comm: c, params: params, inPlaceMin: inPlace}
	for _, idx := range planBuckets(params, capBytes/4) {
		b := &bucket{idx: idx, dev: params[idx[0]].Device()}
		n := 0
		for k, i := range idx {
			m := params[i].Numel()
			n += m
			if m >= inPlace {
				b.inPlace = append(b.inPlace, k)
			} else {
				b.packed = append(b.packed, k)
			}
		}
		if b.dev == tensor.CPU {
			b.buf = make([]float32, 0, n+len(idx))
		} else {
			b.inPlace, b.packed = nil, nil
			b.flat = tensor.Zeros(n).To(b.dev)
			b.flags = make([]float32, len(idx))
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
		buf := b.buf[:0]
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
// ranks, bucket by bucket. A parameter without a gradient counts as zeros;
// it gets the mean when another rank had a gradient for it and stays
// without one when no rank had. Gradients are overwritten in place where
// they are contiguous tensors and replaced otherwise.
//
// On the CPU, the gradients of a bucket's small parameters go through one
// buffer (one collective), and each gradient of 16384 elements or more is
// reduced in its own storage; on a GPU, a bucket's gradients are copied
// into one buffer on the GPU, reduced there and copied back.
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

// syncHost reduces a CPU bucket: first its packed gradients and every
// parameter's flag in one collective, then the large gradients in place.
func (d *DataParallel) syncHost(b *bucket, scale float32) error {
	buf := b.buf[:0]
	for _, k := range b.packed {
		p := d.params[b.idx[k]]
		if g := p.Grad(); g != nil {
			buf = append(buf, read(g)...)
		} else {
			buf = append(buf, make([]float32, p.Numel())...)
		}
	}
	flags := len(buf)
	for _, i := range b.idx {
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
	for _, k := range b.packed {
		p := d.params[b.idx[k]]
		n := p.Numel()
		seg := buf[off : off+n]
		off += n
		if buf[flags+k] == 0 {
			continue
		}
		if g := p.Grad(); g != nil && g.Device() == tensor.CPU && g.IsContiguous() {
			d.comm.scaleInto(g.HostFloat32s(), seg, scale)
			continue
		}
		d.comm.scaleInto(seg, seg, scale)
		if g := p.Grad(); g != nil {
			write(g, seg)
		} else {
			p.SetGrad(tensor.New(append([]float32(nil), seg...), p.Shape()...))
		}
	}
	for _, k := range b.inPlace {
		if buf[flags+k] == 0 {
			continue // no rank has a gradient: every rank skips it
		}
		p := d.params[b.idx[k]]
		g := p.Grad()
		if g == nil {
			g = tensor.Zeros(p.Shape()...)
			p.SetGrad(g)
		}
		if err := inPlace(g, true, func(v []float32) error {
			if err := d.comm.AllReduceFloat32s(v, Sum); err != nil {
				return err
			}
			d.comm.scaleInto(v, v, scale) // while v is in the cache
			return nil
		}); err != nil {
			return err
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
