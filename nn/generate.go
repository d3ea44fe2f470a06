package nn

import (
	"context"
	"fmt"

	"github.com/chewxy/math32"
	"github.com/wickml/wick/tensor"
)

// Generation with a key/value cache.
//
// A call to Generate runs the prompt through the model once (the prefill),
// keeping every layer's keys and values of every position in a cache that
// belongs to that call alone (never to the shared model, so goroutines
// may generate on one model at once). Each further token then costs one
// position's forward pass: its query attends to the cached keys and values
// of the earlier positions plus its own.
//
// Once the context grows past BlockSize, nanoGPT crops it to the last
// BlockSize tokens and recomputes: every kept token moves to a new
// position, so its keys and values (which depend on its position through
// wpe and every layer below) change, and no cached entry stays valid.
// To give nanoGPT's results there too, Generate then recomputes the
// cropped window for every token, as nanoGPT does; the cache serves the
// steps up to BlockSize.

// NewKVCache implements CausalLM: per-layer keys and values
// [batch, capacity, NEmbd] (as many key/value heads as query heads).
func (g *GPT) NewKVCache(batch, capacity int) *KVCache {
	c := &KVCache{Capacity: capacity}
	dev := g.Wte.Weight.Device()
	for range g.H {
		c.K = append(c.K, tensor.Zeros(batch, capacity, g.Config.NEmbd).To(dev))
		c.V = append(c.V, tensor.Zeros(batch, capacity, g.Config.NEmbd).To(dev))
	}
	return c
}

// ForwardCached implements CausalLM. One token of one sequence (idx
// [1, 1]) of a float32 or bfloat16 model on the CPU, outside a recorded
// pass and an autocast region, takes a fused step (gpt_fused.go) with the
// eager ops' bits. It panics if idx is not Int64 [B, T], or the cache
// cannot take T more positions.
func (g *GPT) ForwardCached(idx *tensor.Tensor, c *KVCache) *tensor.Tensor {
	checkTokens("GPT.ForwardCached", idx)
	if tok, ok := fusedToken(idx, c, g.Config.VocabSize); ok {
		s := decodePool.Get().(*decodeScratch)
		defer decodePool.Put(s)
		if f, ok := g.fusedDecode(c, s); ok {
			logits := g.decodeFused(f, s, tok, c.Len)
			c.Len++
			return logits
		}
	}
	return g.LmHead.Forward(g.forwardCached(idx, c)).Reshape(idx.Size(0), -1)
}

// fusedToken returns the token of idx where ForwardCached may take a
// fused step: one token of one sequence on the CPU, in the vocabulary,
// with room for it in c.
func fusedToken(idx *tensor.Tensor, c *KVCache, vocab int) (int, bool) {
	if idx.Size(0) != 1 || idx.Size(1) != 1 || idx.Device() != tensor.CPU || c.Len >= c.Capacity {
		return 0, false
	}
	tok := idx.Ints()[0]
	return tok, tok >= 0 && tok < vocab
}

// forwardCached runs the tokens idx [B, T] at positions c.Len … c.Len+T−1
// through the model, appending their keys and values to c, and returns the
// final-LayerNorm output of the last of them, [B, 1, C].
func (g *GPT) forwardCached(idx *tensor.Tensor, c *KVCache) *tensor.Tensor {
	t := idx.Size(1)
	if c.Len+t > c.Capacity {
		panic(&tensor.Error{Pkg: "nn", Op: "GPT.Generate", Msg: fmt.Sprintf("key/value cache of %d positions cannot take %d more after %d", c.Capacity, t, c.Len)})
	}
	pos := tensor.ArangeInt(c.Len+t).Slice(0, c.Len, c.Len+t).To(idx.Device())
	x := g.Drop.Forward(embedAdd(g.Wte, g.Wpe, idx, pos))
	for i, b := range g.H {
		x = b.forwardCached(x, c.K[i], c.V[i], c.Len)
	}
	c.Len += t
	return g.LnF.Forward(x.Slice(1, t-1, t))
}

// forwardCached is Forward for x [B, T, C] at positions pos … pos+T−1,
// with the keys and values of positions 0 … pos−1 in k and v [B, ≥pos+T, C]
// and those of x written there.
func (bl *Block) forwardCached(x, k, v *tensor.Tensor, pos int) *tensor.Tensor {
	x = x.Add(bl.Attn.forwardCached(bl.Ln1.Forward(x), k, v, pos))
	return x.Add(bl.MLP.Forward(bl.Ln2.Forward(x)))
}

// forwardCached is Forward for x [B, T, C] at positions pos … pos+T−1:
// it writes the keys and values of x into k and v [B, ≥pos+T, C] at those
// positions, and each query attends to positions 0 … its own. With pos 0
// it computes exactly what Forward does (the fused AttentionQKV).
func (a *CausalSelfAttention) forwardCached(x, k, v *tensor.Tensor, pos int) *tensor.Tensor {
	b, t, c := x.Size(0), x.Size(1), x.Size(2)
	qkv := a.CAttn.Forward(x)
	parts := qkv.Split(c, 2)
	k.Slice(1, pos, pos+t).CopyFrom(parts[1])
	v.Slice(1, pos, pos+t).CopyFrom(parts[2])
	var y *tensor.Tensor
	if pos == 0 {
		y = tensor.AttentionQKV(qkv, a.NHead, true)
	} else {
		hs := c / a.NHead
		heads := func(z *tensor.Tensor) *tensor.Tensor { // (B, nh, len, hs)
			return z.Reshape(b, z.Size(1), a.NHead, hs).Transpose(1, 2)
		}
		q := heads(parts[0])
		keys, vals := heads(k.Slice(1, 0, pos+t)), heads(v.Slice(1, 0, pos+t))
		y = CausalAttention(q, keys, vals, pos).Transpose(1, 2).Reshape(b, t, c)
	}
	return a.ResidDrop.Forward(a.CProj.Forward(y))
}

// dropoutActive reports whether a Dropout layer of the model would draw a
// mask (training mode with P > 0). Generate then recomputes the context
// for every token, exactly as before the cache existed, so that the masks
// are drawn as they were.
func (g *GPT) dropoutActive() bool {
	on := func(d *Dropout) bool { return d.Training && d.P > 0 }
	if on(g.Drop) {
		return true
	}
	for _, b := range g.H {
		if on(b.Attn.AttnDropout) || on(b.Attn.ResidDrop) || on(b.MLP.Drop) {
			return true
		}
	}
	return false
}

// Generate extends each row of idx [B, T] by maxNew tokens, like nanoGPT's
// generate: the context is cropped to the last BlockSize tokens, the
// last position's logits are divided by temperature, restricted to the topK
// most likely tokens when topK > 0, and a token is drawn with
// tensor.Multinomial from the global generator. Temperature 0 is greedy
// decoding, as in OpenAI's and Hugging Face's APIs: each token is the most
// likely one (the first of equal logits), the tokens topK = 1 gives, and
// nothing is drawn from the generator. It records nothing on the tape. Call
// Eval first to switch dropout off, as nanoGPT's sample.py does.
//
// Generate keeps the keys and values of earlier positions in a cache of
// its own, so each new token costs one position's forward pass; the
// results are those of recomputing the whole context for every token.
// Past BlockSize tokens the cropped window shifts every position and is
// recomputed for each new token, as nanoGPT does. With dropout active
// (training mode) every token recomputes the context.
//
// It returns [B, T+maxNew]. It panics if temperature is negative or NaN or
// idx is not an Int64 tensor [B, T] with T ≥ 1.
func (g *GPT) Generate(idx *tensor.Tensor, maxNew int, temperature float32, topK int) *tensor.Tensor {
	return g.GenerateWith(idx, maxNew, temperature, topK, nil)
}

// GenerateWith is Generate with the tokens drawn from gen (the global
// generator if gen is nil); at temperature 0 (greedy) nothing is drawn.
//
// Many goroutines may call Generate and GenerateWith on one model at once,
// as long as the model is in evaluation mode (Eval) and nobody changes or
// trains it meanwhile: each call has its own key/value cache. With a
// generator of its own, each call returns the tokens it would return
// alone; calls that share a generator (nil: the global one) interleave
// their draws. In training mode the Dropout layers also draw, from their
// own Gen rather than from gen. GenerateWith panics like Generate.
func (g *GPT) GenerateWith(idx *tensor.Tensor, maxNew int, temperature float32, topK int, gen *tensor.Generator) *tensor.Tensor {
	return g.generate(idx, maxNew, temperature, topK, gen, g.dropoutActive(), nil, nil)
}

// GenerateContext is GenerateWith that stops between two tokens once ctx
// is done (a signal handler, a client that went away, a deadline). It
// returns the rows as far as they got and ctx.Err(), or every token and
// nil. GenerateContext panics like Generate.
func (g *GPT) GenerateContext(ctx context.Context, idx *tensor.Tensor, maxNew int, temperature float32, topK int, gen *tensor.Generator) (*tensor.Tensor, error) {
	stop := func() bool { return ctx.Err() != nil }
	out := g.generate(idx, maxNew, temperature, topK, gen, g.dropoutActive(), nil, stop)
	if out.Size(1) < idx.Size(1)+maxNew {
		return out, ctx.Err()
	}
	return out, nil
}

// generate is GenerateWith; with recompute set it runs the whole cropped
// context through Forward for every token (the reference the cache is
// tested against). observe, if not nil, sees each step's last-position
// logits [B, VocabSize] before temperature and top-k; stop, if not nil, ends
// the generation before a token when it returns true.
func (g *GPT) generate(idx *tensor.Tensor, maxNew int, temperature float32, topK int, gen *tensor.Generator, recompute bool, observe func(*tensor.Tensor), stop func() bool) *tensor.Tensor {
	if !(temperature >= 0) {
		panic(&tensor.Error{Pkg: "nn", Op: "GPT.Generate", Msg: fmt.Sprintf("temperature must be ≥ 0 (0: greedy decoding), got %v", temperature)})
	}
	if idx.Dim() != 2 || idx.DType() != tensor.Int64 || idx.Size(1) == 0 {
		panic(&tensor.Error{Pkg: "nn", Op: "GPT.Generate", Msg: fmt.Sprintf("expected int64 token indices [B, T] with T ≥ 1, got %s tensor of shape %v", idx.DType(), idx.Shape())})
	}
	opts := GenerateOptions{MaxNewTokens: maxNew, Temperature: temperature, TopK: topK, Generator: gen, IgnoreEOS: true}
	out, _ := generateLoop(g, idx, opts, recompute, observe, stop)
	return out
}

// keepTopK sets every logit below the k-th largest of its row to -Inf
// (ties with the k-th are kept, as in nanoGPT).
func keepTopK(logits *tensor.Tensor, k int) *tensor.Tensor {
	rows, n := logits.Size(0), logits.Size(1)
	vals := logits.Float32s()
	for r := range rows {
		row := vals[r*n : (r+1)*n]
		kth := kthLargest(row, k) // sample.go
		for j, v := range row {
			if v < kth {
				row[j] = math32.Inf(-1)
			}
		}
	}
	return tensor.New(vals, rows, n).To(logits.Device())
}

// lastLogits implements lastLogitser: the head on the last position of
// the final-LayerNorm output, as GPT's generation always computed it.
func (g *GPT) lastLogits(idx *tensor.Tensor) *tensor.Tensor {
	h := g.hidden(idx)
	return g.LmHead.Forward(h.Slice(1, h.Size(1)-1, h.Size(1))).Reshape(idx.Size(0), -1)
}

// ModelType implements CausalLM: "gpt2".
func (g *GPT) ModelType() string { return "gpt2" }

// VocabSize implements CausalLM: Config.VocabSize.
func (g *GPT) VocabSize() int { return g.Config.VocabSize }

// ContextSize implements CausalLM: Config.BlockSize.
func (g *GPT) ContextSize() int { return g.Config.BlockSize }

// EOSTokenIDs implements CausalLM: nil, a GPTConfig names no end token.
func (g *GPT) EOSTokenIDs() []int { return nil }
