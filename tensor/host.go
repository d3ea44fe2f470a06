package tensor

// HostFloat32s returns the elements of a contiguous Float32 tensor on the CPU
// as the slice of its storage that holds them, without copying: writes
// through the slice change the tensor and every view of the same storage,
// and are never recorded for autograd. It is meant for code that hands
// tensors to C libraries or to the network in place, such as package dist's
// collectives; everyone else should use Float32s (a copy) and CopyFrom.
// Since the slice can outlive every tensor viewing the storage, the
// storage's buffer is never reused for another tensor afterwards, even when
// the tensor is released (Release then leaves it to the garbage collector).
//
// HostFloat32s panics if t is not a contiguous Float32 tensor on the CPU.
func (t *Tensor) HostFloat32s() []float32 {
	s, ok := t.storage.(*cpuStorage)
	if ok {
		s = s.live()
	}
	if !ok || s.dt != Float32 || !t.IsContiguous() {
		panicf("HostFloat32s", "want a contiguous Float32 tensor on the CPU, got %s %s of shape %v (contiguous %v)",
			t.DType(), t.Device(), t.layout.Shape, t.IsContiguous())
	}
	s.pin() // the slice may outlive every tensor viewing s
	n := t.Numel()
	return s.f[t.layout.Offset : t.layout.Offset+n : t.layout.Offset+n]
}

// HostBits16 is HostFloat32s for a contiguous BFloat16 or Float16 tensor
// on the CPU: the slice of its storage that holds its bit patterns,
// without copying, under the same terms (writes are never recorded, and
// the storage's buffer is never reused afterwards). Bits16 is the copy.
//
// HostBits16 panics if t is not a contiguous BFloat16 or Float16 tensor
// on the CPU.
func (t *Tensor) HostBits16() []uint16 {
	s, ok := t.storage.(*cpuStorage)
	if ok {
		s = s.live()
	}
	if !ok || !is16(s.dt) || !t.IsContiguous() {
		panicf("HostBits16", "want a contiguous BFloat16 or Float16 tensor on the CPU, got %s %s of shape %v (contiguous %v)",
			t.DType(), t.Device(), t.layout.Shape, t.IsContiguous())
	}
	s.pin()
	n := t.Numel()
	return s.h[t.layout.Offset : t.layout.Offset+n : t.layout.Offset+n]
}
