//go:build cuda

package cuda

import (
	"fmt"
	"testing"

	"github.com/wickml/wick/internal/approx"
)

// TestUploadStaged uploads more than the two pinned staging buffers hold
// (several pieces, each buffer reused), overwrites the host slice as soon
// as the upload returns, and reads the original values back. (The emulated
// driver also rejects an asynchronous upload from memory that is not
// pinned, so every upload of the suite goes through the staging buffers.)
func TestUploadStaged(t *testing.T) {
	g, _ := gpu(t)
	r := newRNG(t)
	for _, n := range []int{1, stagingBytes / 4, stagingBytes/4 + 1, 3*stagingBytes/4 + 12345} {
		x := randn(r, n)
		want := append([]float32{}, x...)
		s := g.FromFloat32s(x)
		for i := range x {
			x[i] = -1
		}
		got := g.Float32s(s, whole(n))
		approx.Equal(t, fmt.Sprintf("upload of %d floats", n), got, want, 0, 0)
	}
}

// TestUploadConcurrent uploads from several goroutines at once through the
// device's shared staging buffers (run it under -race) and reads each
// upload back.
func TestUploadConcurrent(t *testing.T) {
	g, _ := gpu(t)
	r := newRNG(t)
	const workers = 4
	data := make([][]float32, workers)
	for w := range data {
		data[w] = randn(r, stagingBytes/4+1000*w+1) // two pieces each
	}
	errs := make(chan error, workers)
	for w := range workers {
		go func() {
			for range 3 {
				s := g.FromFloat32s(data[w])
				got := g.Float32s(s, whole(len(data[w])))
				for i, v := range got {
					if v != data[w][i] {
						errs <- fmt.Errorf("worker %d: element %d: got %v, want %v", w, i, v, data[w][i])
						return
					}
				}
			}
			errs <- nil
		}()
	}
	for range workers {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
