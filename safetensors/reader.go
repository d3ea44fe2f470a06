package safetensors

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
)

// Ref is where one tensor's data lie in a file: N elements of DType from
// byte Offset of File.
type Ref struct {
	File   string
	Name   string
	DType  string
	Shape  []int
	Offset int64
	N      int

	// file is the file FileHeader.Ref read the header from (nil for a Ref
	// made by hand): a Reader refuses to read t's data from another file
	// at the same path, one that replaced it since.
	file os.FileInfo
}

// Float reports whether Decode converts r's dtype (F32, F16 or BF16).
func (r Ref) Float() bool { return r.DType == "F32" || r.DType == "F16" || r.DType == "BF16" }

// DefaultChunkBytes is the size of one read of a Reader from NewReader.
const DefaultChunkBytes = 256 << 10

// Reader streams tensors out of safetensors files as float32, a chunk at a
// time, through buffers it reuses; it keeps the files it opened open until
// Close. A Reader belongs to one goroutine.
type Reader struct {
	chunk  int
	finite bool // Each and EachRows refuse NaN and infinities
	files  map[string]*os.File
	infos  map[string]os.FileInfo // of files, as opened
	raw    []byte
	vals   []float32
	raw2   []byte // for FirstDifference
	vals2  []float32
}

// NewReader returns a Reader of DefaultChunkBytes reads.
func NewReader() *Reader { return NewReaderSize(DefaultChunkBytes) }

// NewReaderSize returns a Reader whose reads are of about chunkBytes
// (at least one element or row). It panics with a *UsageError if
// chunkBytes is not positive.
func NewReaderSize(chunkBytes int) *Reader {
	if chunkBytes <= 0 {
		panic(&UsageError{Op: "NewReaderSize", Msg: fmt.Sprintf("chunk size must be positive, got %d", chunkBytes)})
	}
	return &Reader{chunk: chunkBytes, files: map[string]*os.File{}, infos: map[string]os.FileInfo{}, raw: make([]byte, chunkBytes), vals: make([]float32, max(chunkBytes/2, 1))}
}

// ErrNonFinite is wrapped by the errors of a Reader that requires finite
// values (RequireFinite) about a NaN or an infinity.
var ErrNonFinite = errors.New("non-finite value")

// RequireFinite makes r's Each and EachRows check every chunk as it is
// decoded and, at the first NaN or infinity, return an error naming the
// file, the tensor and the element, wrapping ErrNonFinite, without passing
// that chunk to the callback (on false: values pass as they are, the
// default). A loader of weights fills its tensors and checks them in the
// one pass over the file.
func (r *Reader) RequireFinite(on bool) { r.finite = on }

// Close closes the files r opened.
func (r *Reader) Close() error {
	var errs []error
	for _, f := range r.files {
		errs = append(errs, f.Close())
	}
	r.files, r.infos = map[string]*os.File{}, map[string]os.FileInfo{}
	return errors.Join(errs...)
}

// open returns t's file, opened once per path. When t comes from a
// FileHeader, the file must be the one its header was read from: one that
// replaced it meanwhile (a checkpoint saved by a running training, renamed
// over the old one) has its data at other offsets, so reading it is an
// error, ErrChanged, rather than wrong or truncated tensors.
func (r *Reader) open(t Ref) (*os.File, error) {
	f := r.files[t.File]
	if f == nil {
		var err error
		if f, err = os.Open(t.File); err != nil {
			return nil, err
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, err
		}
		r.files[t.File], r.infos[t.File] = f, fi
	}
	if t.file != nil && !os.SameFile(t.file, r.infos[t.File]) {
		return nil, fmt.Errorf("%s: %w", t.File, ErrChanged)
	}
	return f, nil
}

// ErrChanged is wrapped by the errors of a Reader asked for a tensor of a
// file that another one replaced since its header was read.
var ErrChanged = errors.New("the file was replaced while it was being read (by a save?); read it again")

// read decodes elements [off, off+len(dst)) of t into dst through raw.
func read(f *os.File, t Ref, off int, dst []float32, raw []byte) error {
	es := elementSizes[t.DType]
	b := raw[:len(dst)*es]
	if _, err := f.ReadAt(b, t.Offset+int64(off*es)); err != nil {
		if errors.Is(err, io.EOF) {
			err = fmt.Errorf("%w: the file ends inside its data", ErrTruncated)
		}
		return fmt.Errorf("%s: tensor %q: %w", t.File, t.Name, err)
	}
	Decode(dst, b, t.DType)
	return nil
}

// Each calls fn with consecutive chunks of t's elements, converted to
// float32, and the index of each chunk's first element. The chunk's slice
// is reused by the next call. t must be a Float dtype.
func (r *Reader) Each(t Ref, fn func(off int, v []float32)) error {
	return r.EachRows(t, 1, fn)
}

// EachRows is Each with chunks of whole rows of rowLen elements (t.N is a
// multiple of rowLen).
func (r *Reader) EachRows(t Ref, rowLen int, fn func(off int, v []float32)) error {
	if !t.Float() {
		return fmt.Errorf("%s: tensor %q: dtype %s is not one of F32, F16, BF16", t.File, t.Name, t.DType)
	}
	f, err := r.open(t)
	if err != nil {
		return err
	}
	es := elementSizes[t.DType]
	per := r.chunk / es
	per -= per % rowLen
	if per == 0 { // a row longer than a chunk
		per = rowLen
	}
	if len(r.raw) < per*es {
		r.raw = make([]byte, per*es)
	}
	if len(r.vals) < per {
		r.vals = make([]float32, per)
	}
	for off := 0; off < t.N; off += per {
		v := r.vals[:min(per, t.N-off)]
		if err := read(f, t, off, v, r.raw); err != nil {
			return err
		}
		if r.finite {
			if i := firstNonFinite(v); i >= 0 {
				return fmt.Errorf("%s: tensor %q: %w: element %d is %v", t.File, t.Name, ErrNonFinite, off+i, v[i])
			}
		}
		fn(off, v)
	}
	return nil
}

// firstNonFinite returns the index of the first NaN or infinity of v, or
// -1.
func firstNonFinite(v []float32) int {
	for i, x := range v {
		if x-x != 0 { // NaN − NaN and ∞ − ∞ are NaN, which is not 0
			return i
		}
	}
	return -1
}

// EachInt64 calls fn with consecutive chunks of t's elements (dtype I64)
// and the index of each chunk's first element. The chunk's slice is reused
// by the next call.
func (r *Reader) EachInt64(t Ref, fn func(off int, v []int64)) error {
	if t.DType != "I64" {
		return fmt.Errorf("%s: tensor %q: dtype %s is not I64", t.File, t.Name, t.DType)
	}
	f, err := r.open(t)
	if err != nil {
		return err
	}
	per := max(r.chunk/8, 1)
	if len(r.raw) < per*8 {
		r.raw = make([]byte, per*8)
	}
	v := make([]int64, min(per, t.N))
	for off := 0; off < t.N; off += per {
		k := min(per, t.N-off)
		b := r.raw[:8*k]
		if _, err := f.ReadAt(b, t.Offset+int64(8*off)); err != nil {
			if errors.Is(err, io.EOF) {
				err = fmt.Errorf("%w: the file ends inside its data", ErrTruncated)
			}
			return fmt.Errorf("%s: tensor %q: %w", t.File, t.Name, err)
		}
		for i := range k {
			v[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
		}
		fn(off, v[:k])
	}
	return nil
}

// FirstDifference compares a and b (of one element count) once converted
// to float32, bit for bit, and returns the index of the first element
// where they differ and the two values there, or -1.
func (r *Reader) FirstDifference(a, b Ref) (int, float32, float32, error) {
	if !a.Float() || !b.Float() || a.N != b.N {
		return 0, 0, 0, fmt.Errorf("%s: tensor %q: cannot be compared with %q (dtypes %s and %s, %d and %d elements)", a.File, a.Name, b.Name, a.DType, b.DType, a.N, b.N)
	}
	fa, err := r.open(a)
	if err != nil {
		return 0, 0, 0, err
	}
	fb, err := r.open(b)
	if err != nil {
		return 0, 0, 0, err
	}
	per := max(r.chunk/max(elementSizes[a.DType], elementSizes[b.DType]), 1)
	if len(r.raw) < per*4 {
		r.raw, r.vals = make([]byte, per*4), make([]float32, per)
	}
	if len(r.raw2) < per*4 {
		r.raw2, r.vals2 = make([]byte, per*4), make([]float32, per)
	}
	for off := 0; off < a.N; off += per {
		k := min(per, a.N-off)
		va, vb := r.vals[:k], r.vals2[:k]
		if err := read(fa, a, off, va, r.raw); err != nil {
			return 0, 0, 0, err
		}
		if err := read(fb, b, off, vb, r.raw2); err != nil {
			return 0, 0, 0, err
		}
		for i := range va {
			if math.Float32bits(va[i]) != math.Float32bits(vb[i]) {
				return off + i, va[i], vb[i], nil
			}
		}
	}
	return -1, 0, 0, nil
}

// Decode converts the little-endian F32, F16 or BF16 values in raw to
// dst (len(dst) elements). It panics with a *UsageError for another
// dtype.
func Decode(dst []float32, raw []byte, dtype string) {
	switch dtype {
	case "F32":
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	case "F16":
		for i := range dst {
			dst[i] = HalfToFloat32(binary.LittleEndian.Uint16(raw[2*i:]))
		}
	case "BF16":
		for i := range dst {
			dst[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(raw[2*i:])) << 16)
		}
	default:
		panic(&UsageError{Op: "Decode", Msg: "dtype " + dtype + " is not F32, F16 or BF16 (the caller checks dtypes first)"})
	}
}

// HalfToFloat32 converts an IEEE 754 binary16 value to float32 (exactly:
// every half is a float32).
func HalfToFloat32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch exp {
	case 0x1f: // infinity or NaN
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case 0: // zero or subnormal: mant·2⁻²⁴
		v := float32(mant) / (1 << 24)
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
}
