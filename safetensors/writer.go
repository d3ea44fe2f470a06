package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"sort"
)

// Tensor is one tensor to Write: Data writes exactly its
// NumElements·ElementSize(DType) little-endian bytes.
type Tensor struct {
	Name  string
	DType string
	Shape []int
	Data  func(w io.Writer) error
}

// Write writes tensors in the safetensors format: the 8-byte header
// length, a JSON header (names in sorted order with dtype, shape and
// data_offsets, and metadata under "__metadata__" when given) padded with
// spaces to a multiple of 8 bytes, then each tensor's data in header order.
// It returns an error for a duplicate or reserved name, an unknown dtype,
// or data of the wrong length.
func Write(w io.Writer, tensors []Tensor, metadata map[string]string) error {
	ts := append([]Tensor(nil), tensors...)
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
	var hdr bytes.Buffer
	hdr.WriteByte('{')
	first := true
	if len(metadata) > 0 {
		m, err := json.Marshal(metadata)
		if err != nil {
			return fmt.Errorf("metadata: %w", err)
		}
		hdr.WriteString(`"__metadata__":`)
		hdr.Write(m)
		first = false
	}
	var off int64
	sizes := make([]int64, len(ts))
	for i, t := range ts {
		if t.Name == "__metadata__" {
			return fmt.Errorf("%q is reserved and cannot name a tensor", t.Name)
		}
		if i > 0 && ts[i-1].Name == t.Name {
			return fmt.Errorf("tensor %q: the name appears twice", t.Name)
		}
		es, ok := elementSizes[t.DType]
		if !ok || t.Data == nil {
			return fmt.Errorf("tensor %q: unknown dtype %q or no data", t.Name, t.DType)
		}
		n := int64(es)
		for _, d := range t.Shape {
			n *= int64(d)
		}
		sizes[i] = n
		if !first {
			hdr.WriteByte(',')
		}
		first = false
		name, _ := json.Marshal(t.Name)
		shape, _ := json.Marshal(append([]int{}, t.Shape...))
		fmt.Fprintf(&hdr, `%s:{"dtype":%q,"shape":%s,"data_offsets":[%d,%d]}`, name, t.DType, shape, off, off+n)
		off += n
	}
	hdr.WriteByte('}')
	for hdr.Len()%8 != 0 {
		hdr.WriteByte(' ')
	}
	if err := binary.Write(w, binary.LittleEndian, uint64(hdr.Len())); err != nil {
		return err
	}
	if _, err := w.Write(hdr.Bytes()); err != nil {
		return err
	}
	for i, t := range ts {
		cw := &countWriter{w: w}
		if err := t.Data(cw); err != nil {
			return fmt.Errorf("tensor %q: %w", t.Name, err)
		}
		if cw.n != sizes[i] {
			return fmt.Errorf("tensor %q: wrote %d bytes of data, its shape %v of %s needs %d", t.Name, cw.n, t.Shape, t.DType, sizes[i])
		}
	}
	return nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
