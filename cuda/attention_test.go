//go:build cuda

package cuda

import (
	"fmt"
	"testing"

	"github.com/wickml/wick/tensor"
)

// attentionBackend is the optional fused-attention method set of package
// tensor's backends (tensor/attention.go).
type attentionBackend interface {
	Attention(y, p, qkv tensor.Storage, b, t, nh, hs int, causal bool)
	AttentionGrad(dqkv, dy, p, qkv tensor.Storage, b, t, nh, hs int, causal bool)
}

// TestAttention compares the fused attention (cuBLAS products around the
// softmax kernels) with the CPU's, forward and backward, with the batch
// split per batch element (B ≤ nh) and per head (B > nh).
func TestAttention(t *testing.T) {
	g, c := gpu(t)
	ga, ok := g.(attentionBackend)
	if !ok {
		t.Fatal("the CUDA backend should implement tensor's fused attention")
	}
	ca := c.(attentionBackend)
	r := newRNG(t)
	for _, sh := range [][4]int{{1, 1, 1, 1}, {2, 5, 3, 4}, {5, 17, 2, 8}, {2, 128, 6, 64}} {
		bs, tt, nh, hs := sh[0], sh[1], sh[2], sh[3]
		cc := nh * hs
		for _, causal := range []bool{true, false} {
			name := fmt.Sprintf("Attention B=%d T=%d nh=%d hs=%d causal=%v", bs, tt, nh, hs, causal)
			qkv := upload(g, c, randn(r, bs*tt*3*cc))
			y, p := poisoned(g, c, tensor.Float32, bs*tt*cc), poisoned(g, c, tensor.Float32, bs*nh*tt*tt)
			ga.Attention(y.g, p.g, qkv.g, bs, tt, nh, hs, causal)
			ca.Attention(y.c, p.c, qkv.c, bs, tt, nh, hs, causal)
			gv, cv := p.read(g, c)
			// the CPU sums a row's exponentials in float32 (1e-4: DESIGN.md's
			// tolerance for modules)
			compare(t, name+" p", gv, cv, tol{1e-4, 1e-6})
			gv, cv = y.read(g, c)
			compare(t, name+" y", gv, cv, tol{1e-4, 1e-5})

			// backward from the CPU's p
			_, pv := p.read(g, c)
			ps := upload(g, c, pv)
			dy := upload(g, c, randn(r, bs*tt*cc))
			dq := poisoned(g, c, tensor.Float32, bs*tt*3*cc)
			ga.AttentionGrad(dq.g, dy.g, ps.g, qkv.g, bs, tt, nh, hs, causal)
			ca.AttentionGrad(dq.c, dy.c, ps.c, qkv.c, bs, tt, nh, hs, causal)
			gv, cv = dq.read(g, c)
			compare(t, name+" dqkv", gv, cv, tol{1e-4, 1e-5})
		}
	}
}
