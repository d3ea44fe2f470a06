package safetensors_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/wickml/wick/safetensors"
)

// writeF32 writes one F32 tensor "w" of values vs to path, through a
// temporary file renamed over it (as an atomic save does), with metadata
// of the given length so that the data's offset moves.
func writeF32(t *testing.T, path string, vs []float32, meta string) {
	t.Helper()
	var buf bytes.Buffer
	data := func(w io.Writer) error {
		b := make([]byte, 4*len(vs))
		for i, v := range vs {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
		}
		_, err := w.Write(b)
		return err
	}
	if err := safetensors.Write(&buf, []safetensors.Tensor{{Name: "w", DType: "F32", Shape: []int{len(vs)}, Data: data}}, map[string]string{"m": meta}); err != nil {
		t.Fatal(err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestReaderRefusesReplacedFile: a file saved over (renamed onto the path)
// between reading its header and reading its data is an error wrapping
// ErrChanged, not values read at the old header's offsets; a header read
// again reads the new file.
func TestReaderRefusesReplacedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ckpt.safetensors")
	writeF32(t, path, []float32{1, 2, 3, 4}, "x")
	h, err := safetensors.ReadFileHeader(path)
	if err != nil {
		t.Fatal(err)
	}
	writeF32(t, path, []float32{5, 6, 7, 8}, "a much longer metadata value that moves the data")
	r := safetensors.NewReader()
	defer r.Close()
	err = r.Each(h.Ref(h.Entries[0]), func(int, []float32) { t.Error("read data of the replaced file") })
	if !errors.Is(err, safetensors.ErrChanged) {
		t.Fatalf("reading a replaced file: %v, want ErrChanged", err)
	}

	h, err = safetensors.ReadFileHeader(path)
	if err != nil {
		t.Fatal(err)
	}
	r2 := safetensors.NewReader()
	defer r2.Close()
	var got []float32
	if err := r2.Each(h.Ref(h.Entries[0]), func(_ int, v []float32) { got = append(got, v...) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || got[0] != 5 || got[3] != 8 {
		t.Errorf("the header read again gives %v, want [5 6 7 8]", got)
	}
}
