package nn_test

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/wickml/wick/nn"
)

// fuzzSeeds returns safetensors files for the loaders' fuzz targets: a
// good one, ones cut short, and headers declaring tensors far larger than
// their data (8 GiB, 16 GiB, 2 GiB of I64).
func fuzzSeeds(t testing.TB) [][]byte {
	m, _ := boundsGPT()
	var good bytes.Buffer
	if err := nn.Save(&good, m); err != nil {
		t.Fatal(err)
	}
	seeds := [][]byte{good.Bytes(), good.Bytes()[:good.Len()/2], good.Bytes()[:20], nil}
	raw := func(h string, data []byte) []byte {
		var b bytes.Buffer
		binary.Write(&b, binary.LittleEndian, uint64(len(h)))
		b.WriteString(h)
		b.Write(data)
		return b.Bytes()
	}
	for _, shape := range []string{"[2147483648]", "[65536,65536]", "[0]", "[]", "[1]"} {
		seeds = append(seeds, raw(`{"t":{"dtype":"F32","shape":`+shape+`,"data_offsets":[0,4]}}`, []byte{0, 0, 128, 127}))
	}
	seeds = append(seeds,
		raw(`{"a":{"dtype":"I64","shape":[268435456],"data_offsets":[0,2147483648]}}`, make([]byte, 64)),
		raw(`{"transformer.wte.weight":{"dtype":"F32","shape":[2147483648],"data_offsets":[0,8589934592]}}`, make([]byte, 64)),
		raw(`{"__metadata__":{"format":"wick-train/1"},"optimizer.x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, make([]byte, 8)),
	)
	return seeds
}

// FuzzReadStateDict: whatever the bytes, ReadStateDict returns tensors or
// an error, never panics, and allocates in proportion to the bytes it was
// given, never to the sizes its header declares: at most 64 bytes per
// byte of input (the JSON header's decoding included) and 1 MiB; the
// tensors it returns hold no more elements than the input had bytes for.
// Each run measures its allocation after a collection, so fuzzing runs a
// few hundred inputs a second (go test -fuzz=FuzzReadStateDict
// -fuzzminimizetime=10x ./nn/); go test runs the seeds.
func FuzzReadStateDict(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var sd nn.StateDict
		var err error
		alloc := allocated(func() { sd, _, err = nn.ReadStateDict(bytes.NewReader(b)) })
		if limit := 64*uint64(len(b)) + 1<<20; alloc > limit {
			t.Errorf("%d bytes of input allocated %d bytes (limit %d)", len(b), alloc, limit)
		}
		if err != nil {
			return
		}
		var data int
		for _, x := range sd {
			data += x.Numel()
		}
		if 4*data > len(b) {
			t.Errorf("%d bytes gave tensors of %d elements", len(b), data)
		}
	})
}

// FuzzLoadFile: LoadFile into a tiny GPT allocates, whatever the file
// declares, no more than the model's parameters (twice: read, then
// copied in), buffers and the header's decoding; it leaves the model
// unchanged when it fails, and when it succeeds the model holds finite
// values.
func FuzzLoadFile(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	m, _ := boundsGPT()
	modelBytes := 4 * uint64(nn.NumParams(m))
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(t.TempDir(), "f.safetensors")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		before := snapshot(m)
		var err error
		alloc := allocated(func() { err = nn.LoadFile(path, m) })
		if limit := 64*uint64(len(b)) + 4*modelBytes + 2<<20; alloc > limit {
			t.Errorf("%d bytes of input allocated %d bytes (limit %d)", len(b), alloc, limit)
		}
		if err != nil {
			if !equalSnapshots(before, snapshot(m)) {
				t.Fatalf("the model changed although LoadFile failed: %v", err)
			}
			return
		}
		for _, p := range m.Parameters() {
			for _, v := range p.Float32s() {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					t.Fatalf("LoadFile succeeded with a non-finite weight")
				}
			}
		}
	})
}
