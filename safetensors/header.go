package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
)

// Errors that the package's errors wrap, for errors.Is.
var (
	ErrTruncated     = errors.New("file is truncated")
	ErrCorruptHeader = errors.New("corrupt safetensors header")
)

// MaxHeaderLen bounds the JSON header, like the safetensors library does.
const MaxHeaderLen = 100 << 20

// maxElements bounds the elements of one tensor.
const maxElements = 1 << 40

// elementSizes lists the safetensors dtypes and their element sizes.
var elementSizes = map[string]int{
	"BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1,
	"I16": 2, "U16": 2, "F16": 2, "BF16": 2,
	"I32": 4, "U32": 4, "F32": 4,
	"F64": 8, "I64": 8, "U64": 8,
}

// ElementSize returns the bytes of one element of dtype ("F32", "BF16",
// "I64", …) and whether the format knows dtype.
func ElementSize(dtype string) (int, bool) {
	n, ok := elementSizes[dtype]
	return n, ok
}

// Entry is one tensor of a header: its data lie at bytes [Begin, End) of
// the data section.
type Entry struct {
	Name       string
	DType      string
	Shape      []int
	Begin, End int64
}

// NumElements returns the product of e's shape.
func (e Entry) NumElements() int { return int((e.End - e.Begin) / int64(elementSizes[e.DType])) }

// headerEntry is one tensor's description in the JSON header.
type headerEntry struct {
	DType       *string  `json:"dtype"`
	Shape       *[]int64 `json:"shape"`
	DataOffsets *[]int64 `json:"data_offsets"`
}

// ParseHeader decodes and checks a JSON header: every entry with a known
// dtype, a shape, and data_offsets that match the shape and overlap no
// other entry's. It returns the entries sorted by offset and the
// "__metadata__" map (nil when absent).
func ParseHeader(hdr []byte) ([]Entry, map[string]string, error) {
	dec := json.NewDecoder(bytes.NewReader(hdr))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, nil, fmt.Errorf("%w: header is not a JSON object", ErrCorruptHeader)
	}
	var entries []Entry
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
		if entries[i].Begin != entries[j].Begin {
			return entries[i].Begin < entries[j].Begin
		}
		return entries[i].End < entries[j].End
	})
	for i := 1; i < len(entries); i++ {
		if entries[i].Begin < entries[i-1].End {
			return nil, nil, fmt.Errorf("tensor %q: %w: data_offsets [%d, %d] overlap those of tensor %q", entries[i].Name, ErrCorruptHeader, entries[i].Begin, entries[i].End, entries[i-1].Name)
		}
	}
	return entries, meta, nil
}

func checkEntry(name string, raw json.RawMessage) (Entry, error) {
	var h headerEntry
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		return Entry{}, fmt.Errorf("%w: %v", ErrCorruptHeader, err)
	}
	if h.DType == nil || h.Shape == nil || h.DataOffsets == nil {
		return Entry{}, fmt.Errorf("%w: entry needs dtype, shape and data_offsets", ErrCorruptHeader)
	}
	size, known := elementSizes[*h.DType]
	if !known {
		return Entry{}, fmt.Errorf("%w: unknown dtype %q", ErrCorruptHeader, *h.DType)
	}
	e := Entry{Name: name, DType: *h.DType}
	n := int64(1)
	for _, d := range *h.Shape {
		if d < 0 || d > maxElements {
			return Entry{}, fmt.Errorf("%w: invalid shape %v", ErrCorruptHeader, *h.Shape)
		}
		if d > 0 && n > maxElements/d {
			return Entry{}, fmt.Errorf("%w: shape %v has too many elements", ErrCorruptHeader, *h.Shape)
		}
		n *= d
		e.Shape = append(e.Shape, int(d))
	}
	if e.Shape == nil {
		e.Shape = []int{}
	}
	off := *h.DataOffsets
	if len(off) != 2 || off[0] < 0 || off[1] < off[0] {
		return Entry{}, fmt.Errorf("%w: invalid data_offsets %v", ErrCorruptHeader, off)
	}
	if off[1]-off[0] != n*int64(size) {
		return Entry{}, fmt.Errorf("%w: data_offsets %v span %d bytes but shape %v of %s needs %d", ErrCorruptHeader, off, off[1]-off[0], *h.Shape, *h.DType, n*int64(size))
	}
	e.Begin, e.End = off[0], off[1]
	return e, nil
}

// ReadHeader reads the length and the JSON header from the start of a
// stream and parses it (see ParseHeader). It returns the entries, the
// metadata and the offset of the data section from the stream's start.
func ReadHeader(r io.Reader) ([]Entry, map[string]string, int64, error) {
	var lenBuf [8]byte
	if n, err := io.ReadFull(r, lenBuf[:]); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, nil, 0, fmt.Errorf("%w: %d of the 8 bytes of header length present", ErrTruncated, n)
		}
		return nil, nil, 0, err
	}
	hlen := binary.LittleEndian.Uint64(lenBuf[:])
	if hlen > MaxHeaderLen {
		return nil, nil, 0, fmt.Errorf("%w: header length %d exceeds the limit of %d bytes", ErrCorruptHeader, hlen, MaxHeaderLen)
	}
	hdr, err := io.ReadAll(io.LimitReader(r, int64(hlen)))
	if err != nil {
		return nil, nil, 0, fmt.Errorf("header: %w", err)
	}
	if uint64(len(hdr)) < hlen {
		return nil, nil, 0, fmt.Errorf("%w: header has %d of its %d bytes", ErrTruncated, len(hdr), hlen)
	}
	entries, meta, err := ParseHeader(hdr)
	if err != nil {
		return nil, nil, 0, err
	}
	return entries, meta, 8 + int64(hlen), nil
}

// FileHeader is the header of a safetensors file.
type FileHeader struct {
	Path      string
	Entries   []Entry // sorted by offset
	Metadata  map[string]string
	DataStart int64 // file offset of the data section

	file os.FileInfo // the file the header was read from (see Ref.file)
}

// Ref returns where e's data lie in the file.
func (h *FileHeader) Ref(e Entry) Ref {
	return Ref{File: h.Path, Name: e.Name, DType: e.DType, Shape: e.Shape, Offset: h.DataStart + e.Begin, N: e.NumElements(), file: h.file}
}

// ReadFileHeader reads and checks the header of the safetensors file at
// path, and that the file is long enough for every tensor. Its errors
// begin with path.
func ReadFileHeader(path string) (*FileHeader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	var lenBuf [8]byte
	if n, err := io.ReadFull(f, lenBuf[:]); err != nil {
		return nil, fmt.Errorf("%s: %w: %d of the 8 bytes of header length present", path, ErrTruncated, n)
	}
	hlen := binary.LittleEndian.Uint64(lenBuf[:])
	if hlen > MaxHeaderLen {
		return nil, fmt.Errorf("%s: %w: header length %d exceeds the limit of %d bytes", path, ErrCorruptHeader, hlen, MaxHeaderLen)
	}
	if int64(hlen) > size-8 {
		return nil, fmt.Errorf("%s: %w: the header needs %d bytes, the file has %d after the length", path, ErrTruncated, hlen, size-8)
	}
	hdr := make([]byte, hlen)
	if _, err := io.ReadFull(f, hdr); err != nil {
		return nil, fmt.Errorf("%s: %w: reading the header: %v", path, ErrTruncated, err)
	}
	entries, meta, err := ParseHeader(hdr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	start := 8 + int64(hlen)
	for _, e := range entries {
		if start+e.End > size {
			return nil, fmt.Errorf("%s: tensor %q: %w: its data ends at byte %d of the file, which has %d", path, e.Name, ErrTruncated, start+e.End, size)
		}
	}
	return &FileHeader{Path: path, Entries: entries, Metadata: meta, DataStart: start, file: fi}, nil
}
