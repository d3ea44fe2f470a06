//go:build cuda

package cuda

import (
	"testing"

	"github.com/wickml/wick/tensor/backendtest"
)

// TestBackend runs the backend suite (package tensor/backendtest: every
// kernel against a float64 reference, forward and backward) on cuda:0.
func TestBackend(t *testing.T) {
	g, _ := gpu(t)
	backendtest.Run(t, g)
}
