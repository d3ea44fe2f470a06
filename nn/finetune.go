package nn

import (
	"fmt"

	"github.com/wickml/wick/tensor"
)

// CropBlockSize shortens the model's context to blockSize tokens, as
// nanoGPT's GPT.crop_block_size does before fine-tuning a pretrained model
// on shorter sequences: the position embedding keeps its first blockSize
// rows (a new leaf tensor, requiring gradients if the old one did) and
// Config.BlockSize becomes blockSize. Attention builds its causal mask
// from the input's length, so nothing else changes. Like Train and Eval,
// it must not run while another goroutine uses the model, and an optimizer
// built before it still holds the old position embedding: crop first.
// CropBlockSize panics if blockSize is not in [1, Config.BlockSize].
func (g *GPT) CropBlockSize(blockSize int) {
	if blockSize < 1 || blockSize > g.Config.BlockSize {
		panic(&tensor.Error{Pkg: "nn", Op: "GPT.CropBlockSize", Msg: fmt.Sprintf("block size %d is out of range (want 1 to the model's %d)", blockSize, g.Config.BlockSize)})
	}
	if blockSize == g.Config.BlockSize {
		return
	}
	old := g.Wpe.Weight
	w := old.Detach().Slice(0, 0, blockSize).Clone()
	if old.IsRequiringGrad() {
		w.RequiresGrad()
	}
	g.Wpe.Weight, g.Wpe.Num = w, blockSize
	g.Config.BlockSize = blockSize
}

// SetDropout sets the probability of every Dropout layer of the model, and
// Config.Dropout, to p: nanoGPT's only override of a pretrained model's
// configuration (from_pretrained's override_args). Like Train and Eval, it
// must not run while another goroutine uses the model. SetDropout panics
// if p is not in [0, 1).
func (g *GPT) SetDropout(p float32) {
	if !(p >= 0 && p < 1) {
		panic(&tensor.Error{Pkg: "nn", Op: "GPT.SetDropout", Msg: fmt.Sprintf("dropout probability %v is out of range [0, 1)", p)})
	}
	g.Drop.P = p
	for _, b := range g.H {
		b.Attn.AttnDropout.P = p
		b.Attn.ResidDrop.P = p
		b.MLP.Drop.P = p
	}
	g.Config.Dropout = p
}
