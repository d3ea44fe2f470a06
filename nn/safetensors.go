package nn

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"

	"github.com/wickml/wick/internal/atomicfile"
	"github.com/wickml/wick/tensor"
)

// StateDict maps dotted names to tensors, like PyTorch's state_dict. It is
// what safetensors files hold; SaveFile and LoadFile move a module's
// StateDict, and programs may add tensors of their own (optimizer state,
// RNG state as Int64) and write them with WriteStateDict or
// SaveStateDictFile.
type StateDict map[string]*tensor.Tensor

// Names returns the names in sorted order.
func (sd StateDict) Names() []string {
	names := make([]string, 0, len(sd))
	for n := range sd {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// WithPrefix returns the entries whose names start with prefix, with the
// prefix removed.
func (sd StateDict) WithPrefix(prefix string) StateDict {
	out := StateDict{}
	for n, t := range sd {
		if rest, ok := strings.CutPrefix(n, prefix); ok {
			out[rest] = t
		}
	}
	return out
}

// WithoutPrefix returns the entries whose names do not start with prefix.
func (sd StateDict) WithoutPrefix(prefix string) StateDict {
	out := StateDict{}
	for n, t := range sd {
		if !strings.HasPrefix(n, prefix) {
			out[n] = t
		}
	}
	return out
}

// Errors that checkpoint reading and loading wrap, so that callers can test
// for them with errors.Is. The messages around them name the tensor.
var (
	ErrTruncated        = errors.New("file is truncated")
	ErrCorruptHeader    = errors.New("corrupt safetensors header")
	ErrMissingTensor    = errors.New("missing tensor")
	ErrUnexpectedTensor = errors.New("unexpected tensor")
	ErrShapeMismatch    = errors.New("shape mismatch")
	ErrDTypeMismatch    = errors.New("dtype mismatch")
)

// maxHeaderLen bounds the JSON header, like the safetensors library does.
const maxHeaderLen = 100 << 20

// maxElements bounds the elements of one tensor read from a file.
const maxElements = 1 << 40

// dtypeSizes lists the safetensors dtypes and their element sizes; Wick
// reads and writes F32 and I64.
var dtypeSizes = map[string]int{
	"BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1,
	"I16": 2, "U16": 2, "F16": 2, "BF16": 2,
	"I32": 4, "U32": 4, "F32": 4,
	"F64": 8, "I64": 8, "U64": 8,
}

func safetensorsDType(t *tensor.Tensor) string {
	if t.DType() == tensor.Int64 {
		return "I64"
	}
	return "F32"
}

// WriteStateDict writes sd in the safetensors format: an 8-byte
// little-endian header length, a JSON header (names in sorted order, with
// dtype, shape and data_offsets, and metadata under "__metadata__" when
// given) padded with spaces to 8 bytes, then the little-endian data of each
// tensor in header order. Float32 tensors are stored as F32 and Int64
// tensors as I64.
func WriteStateDict(w io.Writer, sd StateDict, metadata map[string]string) error {
	var hdr bytes.Buffer
	hdr.WriteByte('{')
	first := true
	if len(metadata) > 0 {
		m, err := json.Marshal(metadata)
		if err != nil {
			return fmt.Errorf("nn: write safetensors: metadata: %w", err)
		}
		hdr.WriteString(`"__metadata__":`)
		hdr.Write(m)
		first = false
	}
	names := sd.Names()
	var off int64
	for _, n := range names {
		t := sd[n]
		if t == nil {
			return fmt.Errorf("nn: write safetensors: tensor %q is nil", n)
		}
		if n == "__metadata__" {
			return fmt.Errorf("nn: write safetensors: %q is reserved and cannot name a tensor", n)
		}
		size := int64(t.Numel()) * 4
		if t.DType() == tensor.Int64 {
			size = int64(t.Numel()) * 8
		}
		if !first {
			hdr.WriteByte(',')
		}
		first = false
		key, _ := json.Marshal(n)
		dims := t.Shape()
		if dims == nil {
			dims = []int{} // a 0-d tensor: "shape":[]
		}
		shape, _ := json.Marshal(dims)
		fmt.Fprintf(&hdr, `%s:{"dtype":"%s","shape":%s,"data_offsets":[%d,%d]}`, key, safetensorsDType(t), shape, off, off+size)
		off += size
	}
	hdr.WriteByte('}')
	for hdr.Len()%8 != 0 {
		hdr.WriteByte(' ')
	}
	var lenBuf [8]byte
	binary.LittleEndian.PutUint64(lenBuf[:], uint64(hdr.Len()))
	if _, err := w.Write(lenBuf[:]); err != nil {
		return fmt.Errorf("nn: write safetensors: %w", err)
	}
	if _, err := w.Write(hdr.Bytes()); err != nil {
		return fmt.Errorf("nn: write safetensors: %w", err)
	}
	var buf []byte
	for _, n := range names {
		t := sd[n]
		buf = buf[:0]
		if t.DType() == tensor.Int64 {
			for _, v := range t.Ints() {
				buf = binary.LittleEndian.AppendUint64(buf, uint64(int64(v)))
			}
		} else {
			for _, v := range t.Float32s() {
				buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
			}
		}
		if _, err := w.Write(buf); err != nil {
			return fmt.Errorf("nn: write safetensors: tensor %q: %w", n, err)
		}
	}
	return nil
}

// headerEntry is one tensor's description in a safetensors header.
type headerEntry struct {
	DType       *string  `json:"dtype"`
	Shape       *[]int64 `json:"shape"`
	DataOffsets *[]int64 `json:"data_offsets"`
}

type entry struct {
	name       string
	dtype      string
	shape      []int
	begin, end int64
}

// ReadStateDict reads a safetensors stream written by WriteStateDict or by
// the safetensors library. Tensors of dtype F32 and I64 are supported; any
// other dtype, a malformed header, offsets that disagree with the shapes or
// overlap, or data cut short return an error that names the tensor and
// wraps ErrCorruptHeader, ErrDTypeMismatch or ErrTruncated. The tensors are
// created on the default device.
func ReadStateDict(r io.Reader) (StateDict, map[string]string, error) {
	sd, meta, err := readStateDict(r)
	if err != nil {
		return nil, nil, fmt.Errorf("nn: read safetensors: %w", err)
	}
	return sd, meta, nil
}

// readStateDict is ReadStateDict with errors that do not say "nn: read".
func readStateDict(r io.Reader) (StateDict, map[string]string, error) {
	var lenBuf [8]byte
	if n, err := io.ReadFull(r, lenBuf[:]); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, nil, fmt.Errorf("%w: %d of the 8 bytes of header length present", ErrTruncated, n)
		}
		return nil, nil, err
	}
	hlen := binary.LittleEndian.Uint64(lenBuf[:])
	if hlen > maxHeaderLen {
		return nil, nil, fmt.Errorf("%w: header length %d exceeds the limit of %d bytes", ErrCorruptHeader, hlen, maxHeaderLen)
	}
	hdr, err := io.ReadAll(io.LimitReader(r, int64(hlen)))
	if err != nil {
		return nil, nil, fmt.Errorf("header: %w", err)
	}
	if uint64(len(hdr)) < hlen {
		return nil, nil, fmt.Errorf("%w: header has %d of its %d bytes", ErrTruncated, len(hdr), hlen)
	}
	entries, meta, err := parseHeader(hdr)
	if err != nil {
		return nil, nil, err
	}
	var total int64
	for _, e := range entries {
		if e.dtype != "F32" && e.dtype != "I64" {
			return nil, nil, fmt.Errorf("tensor %q: %w: dtype %s is not supported (Wick reads F32 and I64)", e.name, ErrDTypeMismatch, e.dtype)
		}
		total = max(total, e.end)
	}
	data, err := io.ReadAll(io.LimitReader(r, total))
	if err != nil {
		return nil, nil, fmt.Errorf("data: %w", err)
	}
	sd := StateDict{}
	for _, e := range entries {
		if e.end > int64(len(data)) {
			return nil, nil, fmt.Errorf("tensor %q: %w: its data ends at byte %d of the data section, which has only %d", e.name, ErrTruncated, e.end, len(data))
		}
		sd[e.name] = entryTensor(e, data[e.begin:e.end])
	}
	return sd, meta, nil
}

// entryTensor returns the tensor of e (dtype F32 or I64) from its raw
// little-endian data.
func entryTensor(e entry, raw []byte) *tensor.Tensor {
	if e.dtype == "I64" {
		v := make([]int, len(raw)/8)
		for i := range v {
			v[i] = int(int64(binary.LittleEndian.Uint64(raw[8*i:])))
		}
		return tensor.FromInts(v, len(v)).Reshape(e.shape...)
	}
	v := make([]float32, len(raw)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return tensor.New(v, len(v)).Reshape(e.shape...)
}

// parseHeader decodes and checks the JSON header. Entries come back sorted
// by data offset.
func parseHeader(hdr []byte) ([]entry, map[string]string, error) {
	dec := json.NewDecoder(bytes.NewReader(hdr))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, nil, fmt.Errorf("%w: header is not a JSON object", ErrCorruptHeader)
	}
	var entries []entry
	var meta map[string]string
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %v", ErrCorruptHeader, err)
		}
		name, _ := tok.(string)
		if seen[name] {
			return nil, nil, fmt.Errorf("tensor %q: %w: name appears twice", name, ErrCorruptHeader)
		}
		seen[name] = true
		if name == "__metadata__" {
			if err := dec.Decode(&meta); err != nil {
				return nil, nil, fmt.Errorf("%w: __metadata__ is not a map of strings: %v", ErrCorruptHeader, err)
			}
			continue
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, nil, fmt.Errorf("tensor %q: %w: %v", name, ErrCorruptHeader, err)
		}
		e, err := checkEntry(name, raw)
		if err != nil {
			return nil, nil, fmt.Errorf("tensor %q: %w", name, err)
		}
		entries = append(entries, e)
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, nil, fmt.Errorf("%w: header is not a JSON object", ErrCorruptHeader)
	}
	if rest := bytes.TrimRight(hdr[dec.InputOffset():], " \t\r\n\x00"); len(rest) > 0 {
		return nil, nil, fmt.Errorf("%w: %d bytes of garbage after the JSON object", ErrCorruptHeader, len(rest))
	}
	sort.Slice(entries, func(i, j int) bool {
		if entries[i].begin != entries[j].begin {
			return entries[i].begin < entries[j].begin
		}
		return entries[i].end < entries[j].end
	})
	for i := 1; i < len(entries); i++ {
		if entries[i].begin < entries[i-1].end {
			return nil, nil, fmt.Errorf("tensor %q: %w: data_offsets [%d, %d] overlap those of tensor %q", entries[i].name, ErrCorruptHeader, entries[i].begin, entries[i].end, entries[i-1].name)
		}
	}
	return entries, meta, nil
}

func checkEntry(name string, raw json.RawMessage) (entry, error) {
	var h headerEntry
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		return entry{}, fmt.Errorf("%w: %v", ErrCorruptHeader, err)
	}
	if h.DType == nil || h.Shape == nil || h.DataOffsets == nil {
		return entry{}, fmt.Errorf("%w: entry needs dtype, shape and data_offsets", ErrCorruptHeader)
	}
	size, known := dtypeSizes[*h.DType]
	if !known {
		return entry{}, fmt.Errorf("%w: unknown dtype %q", ErrCorruptHeader, *h.DType)
	}
	e := entry{name: name, dtype: *h.DType}
	n := int64(1)
	for _, d := range *h.Shape {
		if d < 0 || d > maxElements {
			return entry{}, fmt.Errorf("%w: invalid shape %v", ErrCorruptHeader, *h.Shape)
		}
		if d > 0 && n > maxElements/d {
			return entry{}, fmt.Errorf("%w: shape %v has too many elements", ErrCorruptHeader, *h.Shape)
		}
		n *= d
		e.shape = append(e.shape, int(d))
	}
	if e.shape == nil {
		e.shape = []int{}
	}
	off := *h.DataOffsets
	if len(off) != 2 || off[0] < 0 || off[1] < off[0] {
		return entry{}, fmt.Errorf("%w: invalid data_offsets %v", ErrCorruptHeader, off)
	}
	if off[1]-off[0] != n*int64(size) {
		return entry{}, fmt.Errorf("%w: data_offsets %v span %d bytes but shape %v of %s needs %d", ErrCorruptHeader, off, off[1]-off[0], *h.Shape, *h.DType, n*int64(size))
	}
	e.begin, e.end = off[0], off[1]
	return e, nil
}

// SaveStateDictFile writes sd and metadata to path as a safetensors file,
// atomically: path holds either its old contents or the complete new ones.
// The data goes to a temporary file next to path, .NAME.wick-tmp-DIGITS,
// which is synced and renamed over path; a process killed before the
// rename leaves it behind.
func SaveStateDictFile(path string, sd StateDict, metadata map[string]string) error {
	if err := atomicfile.WriteFile(path, func(w io.Writer) error { return WriteStateDict(w, sd, metadata) }); err != nil {
		return fmt.Errorf("nn: %w", err)
	}
	return nil
}

// LoadStateDictFile reads a safetensors file (see ReadStateDict).
func LoadStateDictFile(path string) (StateDict, map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("nn: %w", err)
	}
	defer f.Close()
	sd, meta, err := readStateDict(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return nil, nil, fmt.Errorf("nn: read %s: %w", path, err)
	}
	return sd, meta, nil
}
