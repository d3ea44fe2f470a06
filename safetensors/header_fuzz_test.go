package safetensors_test

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/wickml/wick/safetensors"
)

// allocated returns the bytes fn allocated on the heap (freed ones
// included, so that it bounds the peak).
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func rawFile(h string, data []byte) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, uint64(len(h)))
	b.WriteString(h)
	b.Write(data)
	return b.Bytes()
}

// FuzzReadHeader: whatever the bytes, ReadHeader (a stream) and
// ReadFileHeader (a file) return entries or an error, never panic, and
// allocate in proportion to the bytes given, whatever length and sizes
// the header declares: at most 64 bytes per byte of input and 64 KiB.
// Entries ReadFileHeader accepts lie inside the file. Each run measures
// its allocation after a collection; go test runs the seeds.
func FuzzReadHeader(f *testing.F) {
	var good bytes.Buffer
	if err := safetensors.Write(&good, []safetensors.Tensor{
		{Name: "a", DType: "F32", Shape: []int{2, 3}, Data: f32Data(1, 2, 3, 4, 5, 6)},
		{Name: "b", DType: "BF16", Shape: []int{3, 2}, Data: bf16Data(1, 2, 3, 4, 5, 6)},
	}, map[string]string{"format": "pt"}); err != nil {
		f.Fatal(err)
	}
	for _, s := range [][]byte{
		good.Bytes(), good.Bytes()[:good.Len()/2], good.Bytes()[:12], nil,
		rawFile(`{"t":{"dtype":"F32","shape":[2147483648],"data_offsets":[0,8589934592]}}`, make([]byte, 16)),
		rawFile(`{"t":{"dtype":"F32","shape":[65536,65536,65536],"data_offsets":[0,4]}}`, make([]byte, 4)),
		rawFile(`{"t":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"u":{"dtype":"F32","shape":[1],"data_offsets":[2,6]}}`, make([]byte, 8)),
		rawFile(`{"__metadata__":{"a":"b"},"x":{"dtype":"I64","shape":[],"data_offsets":[0,8]}}`, make([]byte, 8)),
		binary.LittleEndian.AppendUint64(nil, 99<<20), // a header length near the limit, no header
		binary.LittleEndian.AppendUint64(nil, 1<<62),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		limit := 64*uint64(len(b)) + 64<<10
		var err error
		if alloc := allocated(func() { _, _, _, err = safetensors.ReadHeader(bytes.NewReader(b)) }); alloc > limit {
			t.Errorf("ReadHeader: %d bytes of input allocated %d bytes (limit %d)", len(b), alloc, limit)
		}
		path := filepath.Join(t.TempDir(), "f.safetensors")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		var h *safetensors.FileHeader
		if alloc := allocated(func() { h, err = safetensors.ReadFileHeader(path) }); alloc > limit {
			t.Errorf("ReadFileHeader: %d bytes of input allocated %d bytes (limit %d)", len(b), alloc, limit)
		}
		if err != nil {
			return
		}
		for _, e := range h.Entries {
			if e.Begin < 0 || e.End < e.Begin || h.DataStart+e.End > int64(len(b)) {
				t.Errorf("tensor %q at [%d, %d) of the data, which has %d bytes", e.Name, e.Begin, e.End, int64(len(b))-h.DataStart)
			}
		}
	})
}
