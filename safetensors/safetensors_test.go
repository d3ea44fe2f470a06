package safetensors_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wickml/wick/safetensors"
)

func f32Data(v ...float32) func(io.Writer) error {
	return func(w io.Writer) error {
		var b []byte
		for _, x := range v {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
		}
		_, err := w.Write(b)
		return err
	}
}

func bf16Data(v ...float32) func(io.Writer) error {
	return func(w io.Writer) error {
		var b []byte
		for _, x := range v {
			b = binary.LittleEndian.AppendUint16(b, uint16(math.Float32bits(x)>>16))
		}
		_, err := w.Write(b)
		return err
	}
}

// TestWriteReadStream writes a file and streams it back in chunks of
// every size from one element up.
func TestWriteReadStream(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.safetensors")
	vals := []float32{1, -2, 3.5, 0.25, 8, -0.5}
	var buf bytes.Buffer
	err := safetensors.Write(&buf, []safetensors.Tensor{
		{Name: "b", DType: "BF16", Shape: []int{3, 2}, Data: bf16Data(vals...)},
		{Name: "a", DType: "F32", Shape: []int{2, 3}, Data: f32Data(vals...)},
		{Name: "s", DType: "F32", Shape: []int{}, Data: f32Data(7)},
	}, map[string]string{"format": "pt"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := safetensors.ReadFileHeader(path)
	if err != nil {
		t.Fatal(err)
	}
	if h.Metadata["format"] != "pt" || len(h.Entries) != 3 || h.DataStart%8 != 0 {
		t.Fatalf("header %+v", h)
	}
	for _, chunk := range []int{1, 4, 6, 8, 1 << 10} {
		r := safetensors.NewReaderSize(chunk)
		for _, e := range h.Entries {
			ref := h.Ref(e)
			got := make([]float32, ref.N)
			if err := r.Each(ref, func(off int, v []float32) { copy(got[off:], v) }); err != nil {
				t.Fatal(err)
			}
			want := vals
			if e.Name == "s" {
				want = []float32{7}
			}
			if !slices.Equal(got, want) {
				t.Errorf("chunk %d, %s: %v, want %v", chunk, e.Name, got, want)
			}
		}
		a, b := h.Ref(h.Entries[0]), h.Ref(h.Entries[1])
		if i, _, _, err := r.FirstDifference(a, b); err != nil || i != -1 {
			t.Errorf("chunk %d: FirstDifference of equal tensors = %d, %v", chunk, i, err)
		}
		r.Close()
	}
	// a truncated file
	if err := os.WriteFile(path, buf.Bytes()[:buf.Len()-3], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := safetensors.ReadFileHeader(path); !errors.Is(err, safetensors.ErrTruncated) || !strings.Contains(err.Error(), path) {
		t.Errorf("truncated: %v", err)
	}
}

func TestWriteErrors(t *testing.T) {
	for _, ts := range [][]safetensors.Tensor{
		{{Name: "x", DType: "F32", Shape: []int{2}, Data: f32Data(1)}},                                                               // short data
		{{Name: "x", DType: "Q4", Shape: []int{1}, Data: f32Data(1)}},                                                                // dtype
		{{Name: "__metadata__", DType: "F32", Shape: []int{1}, Data: f32Data(1)}},                                                    // reserved
		{{Name: "x", DType: "F32", Shape: []int{1}, Data: f32Data(1)}, {Name: "x", DType: "F32", Shape: []int{1}, Data: f32Data(1)}}, // twice
	} {
		if err := safetensors.Write(io.Discard, ts, nil); err == nil {
			t.Errorf("%v: no error", ts[0].Name)
		}
	}
}

func TestModelFiles(t *testing.T) {
	dir := filepath.Join("..", "testdata", "llama", "llama_linear_f16_sharded")
	files, index, err := safetensors.ModelFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || index["model.norm.weight"] == "" {
		t.Errorf("files %v, index of %d names", files, len(index))
	}
	files, index, err = safetensors.ModelFiles(filepath.Join("..", "testdata", "llama", "qwen2"))
	if err != nil || len(files) != 1 || index != nil {
		t.Errorf("single file: %v, %v, %v", files, index, err)
	}
	if _, _, err := safetensors.ModelFiles(t.TempDir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("empty directory: %v", err)
	}
}
