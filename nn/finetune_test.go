package nn_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
)

func TestCropBlockSize(t *testing.T) {
	full, err := nn.LoadPretrained(filepath.Join(pretrainedDir, "plain"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := nn.LoadPretrained(filepath.Join(pretrainedDir, "plain"))
	if err != nil {
		t.Fatal(err)
	}
	n := full.Config.BlockSize / 4
	g.CropBlockSize(n)
	if g.Config.BlockSize != n || g.Wpe.Num != n {
		t.Fatalf("after CropBlockSize(%d): Config.BlockSize %d, Wpe.Num %d", n, g.Config.BlockSize, g.Wpe.Num)
	}
	if got, want := g.Wpe.Weight.Shape(), []int{n, full.Config.NEmbd}; got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("cropped wpe shape %v, want %v", got, want)
	}
	if !g.Wpe.Weight.IsLeaf() || !g.Wpe.Weight.IsRequiringGrad() {
		t.Fatal("cropped wpe is not a leaf that requires grad")
	}
	found := false
	for _, p := range g.NamedParameters() {
		if p.Name == "transformer.wpe.weight" {
			found = p.Param == g.Wpe.Weight
		}
	}
	if !found {
		t.Fatal("NamedParameters does not hold the cropped wpe")
	}
	// The first n positions keep their embeddings, so logits agree.
	idx := tensor.FromInts([]int{1, 5, 9, 2, 7, 3, 3, 0}[:n], 1, n)
	want, got := full.Forward(idx).Float32s(), g.Forward(idx).Float32s()
	for i := range want {
		if want[i] != got[i] {
			t.Fatalf("logit %d: cropped %v, full %v", i, got[i], want[i])
		}
	}
	// Gradients reach the new position embedding; the full model's is untouched.
	g.Loss(idx, idx).Backward()
	if g.Wpe.Weight.Grad() == nil {
		t.Fatal("no gradient in the cropped wpe")
	}
	if full.Wpe.Weight.Grad() != nil {
		t.Fatal("the full model's wpe got a gradient")
	}
	long := tensor.FromInts(make([]int, n+1), 1, n+1)
	if err := tensor.Catch(func() { g.Forward(long) }); err == nil {
		t.Fatalf("forward of %d tokens after cropping to %d did not panic", n+1, n)
	}
	for _, bad := range []int{0, -1, n + 1} {
		err := tensor.Catch(func() { g.CropBlockSize(bad) })
		var te *tensor.Error
		if !errors.As(err, &te) || te.Op != "GPT.CropBlockSize" {
			t.Errorf("CropBlockSize(%d) on block size %d: got %v, want a *tensor.Error of GPT.CropBlockSize", bad, n, err)
		}
	}
}

func TestSetDropout(t *testing.T) {
	g, err := nn.LoadPretrained(filepath.Join(pretrainedDir, "plain"))
	if err != nil {
		t.Fatal(err)
	}
	idx := tensor.FromInts([]int{4, 8, 15, 16, 23, 42}, 1, 6)
	g.Eval()
	ref := g.Forward(idx).Float32s()
	g.SetDropout(0.5)
	if g.Config.Dropout != 0.5 || g.Drop.P != 0.5 || g.H[0].Attn.AttnDropout.P != 0.5 || g.H[1].MLP.Drop.P != 0.5 || g.H[1].Attn.ResidDrop.P != 0.5 {
		t.Fatal("SetDropout(0.5) left a dropout layer or the config unchanged")
	}
	same := func(a, b []float32) bool {
		for i := range a {
			if a[i] != b[i] {
				return false
			}
		}
		return true
	}
	if !same(ref, g.Forward(idx).Float32s()) {
		t.Fatal("dropout changed the logits in eval mode")
	}
	g.Train()
	if same(ref, g.Forward(idx).Float32s()) {
		t.Fatal("dropout 0.5 left the logits unchanged in training mode")
	}
	for _, bad := range []float32{-0.1, 1} {
		if err := tensor.Catch(func() { g.SetDropout(bad) }); err == nil {
			t.Errorf("SetDropout(%v) did not panic", bad)
		}
	}
}
