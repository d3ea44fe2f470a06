package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/wickml/wick/nn"

	"github.com/wickml/wick/internal/approx"
)

// TestParamCount checks the parameter counts of the model from its shapes
// against a built model, with and without biases.
func TestParamCount(t *testing.T) {
	for _, bias := range []bool{false, true} {
		cfg := nn.GPTConfig{VocabSize: 50, BlockSize: 16, NLayer: 2, NHead: 2, NEmbd: 8, Bias: bias}
		m := nn.NewGPT(cfg)
		if got, want := paramCount(cfg), nn.NumParams(m); got != want {
			t.Errorf("bias %v: paramCount %d, model has %d", bias, got, want)
		}
		if got, want := paramTensors(cfg), len(m.Parameters()); got != want {
			t.Errorf("bias %v: paramTensors %d, model has %d", bias, got, want)
		}
	}
	if got := paramCount(presets["gpt2"].cfg); got != 124_439_808 {
		t.Errorf("GPT-2 124M: %d parameters, want 124439808 (nanoGPT's count with the tied head)", got)
	}
}

// TestStepFLOPs checks the matrix products' FLOPs against the usual count
// for a transformer's training step: 6 FLOPs per token per weight of the
// matrix products (forward 2, backward 4) plus the attention products,
// 12·T·C per token and layer (full T×T scores, as cuBLAS computes them).
func TestStepFLOPs(t *testing.T) {
	for name, p := range presets {
		cfg := p.cfg
		N := float64(p.batch * cfg.BlockSize)
		C, L, T, V := float64(cfg.NEmbd), float64(cfg.NLayer), float64(cfg.BlockSize), float64(cfg.VocabSize)
		weights := L*12*C*C + V*C
		want := 6*N*weights + 12*L*N*T*C
		var got float64
		for _, k := range stepKernels(cfg, p.batch) {
			if k.gemm {
				got += k.flops
			}
		}
		if !approx.Scalar(got, want, 1e-9, 0) {
			t.Errorf("%s: matrix-product FLOPs %.6g, want %.6g", name, got, want)
		}
	}
}

// TestPredict checks the printed prediction: the total is the sum of the
// kinds, the shares add up to 100%, TF32 makes the step faster.
func TestPredict(t *testing.T) {
	p := presets["gpt2"]
	var out bytes.Buffer
	fp32 := predict(&out, "gpt2", p.cfg, p.batch, h200, true)
	s := out.String()
	for _, want := range []string{"predict preset=gpt2 device=H200 matmul=fp32", "matmul", "optimizer", "lm_head (tied to wte) forward", "AdamW"} {
		if !strings.Contains(s, want) {
			t.Errorf("the prediction does not mention %q:\n%s", want, s)
		}
	}
	var sumKinds, shares float64
	for _, line := range strings.Split(s, "\n")[2:] {
		f := strings.Fields(line)
		if len(f) < 6 || !strings.HasSuffix(f[len(f)-4], "%") {
			continue
		}
		var ms, share float64
		if _, err := fmt.Sscan(f[len(f)-5], &ms); err != nil {
			continue
		}
		fmt.Sscan(strings.TrimSuffix(f[len(f)-4], "%"), &share)
		sumKinds += ms
		shares += share
	}
	if !approx.Scalar(sumKinds, fp32*1e3, 0.01, 0) || !approx.Scalar(shares, 100, 0, 0.5) {
		t.Errorf("kinds add up to %.3f ms and %.1f%%, want %.3f ms and 100%%:\n%s", sumKinds, shares, fp32*1e3, s)
	}
	g := h200
	g.useTF = true
	if tf := predict(&bytes.Buffer{}, "gpt2", p.cfg, p.batch, g, false); !(tf < fp32) {
		t.Errorf("TF32 step %.4g s, fp32 %.4g s: TF32 should be faster", tf, fp32)
	}
}
