package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/wickml/wick/nn"
)

// The memory estimate of a training run by part, which checkTrainMemory
// checks before anything is allocated and describeMemory prints before the
// first step: the weights (frozen with --lora_rank, else trained), the
// adapters, the gradients and AdamW's two moments of the trained
// parameters only, the activations one step keeps for backward (with
// --activation_checkpointing, each block's input plus one block's
// intermediates and their gradients while it is recomputed) and the logits (a GPT's whole; a
// Llama-family model's one chunk of tensor.LinearCrossEntropy at a time).

// trainShape is what the estimate needs of the model a run trains.
type trainShape struct {
	params       float64 // every parameter of the model (a tied head counted once)
	weightBytes  float64 // bytes per weight: 4, or 2 for a 16-bit LoRA base
	weightsDType string  // --dtype of a 16-bit LoRA base, else ""
	adapters     float64 // the LoRA adapters' parameters, 0 without
	layers       int
	layerFloats  float64 // floats one block keeps per token for backward, with its adapters'
	blockFloats  float64 // the same inside a checkpointed block (0: layerFloats), before its adapters'
	carry        float64 // floats per token a checkpointed block keeps: its input
	outer        float64 // floats per token outside the blocks: embeddings, final norm
	vocab        int
	checkpointed bool
	chunkedHead  int // the head's input features when the loss is tensor.LinearCrossEntropy, else 0
}

// gptShape returns the shape of training the GPT c with o's flags.
func gptShape(c nn.GPTConfig, o *options) trainShape {
	e := float64(c.NEmbd)
	s := trainShape{params: float64(c.NumParams()), weightBytes: weightBytes(o), weightsDType: weightsDType(o), layers: c.NLayer, layerFloats: perToken(c, c.BlockSize),
		carry: e, outer: 4 * e, vocab: c.VocabSize, checkpointed: o.ActivationCheckpointing}
	s.blockFloats = s.layerFloats
	if o.LoRARank > 0 {
		// c_attn C→3C, attn.c_proj and mlp.c_proj C→C and 4C→C, c_fc C→4C
		dims := map[string][][2]float64{"c_attn": {{e, 3 * e}}, "c_proj": {{e, e}, {4 * e, e}}, "c_fc": {{e, 4 * e}}}
		s.addAdapters(o, dims, false)
	}
	return s
}

// llamaShape returns the shape of training the Llama-family model c with
// o's flags and a context of o.BlockSize tokens.
func llamaShape(c nn.LlamaConfig, o *options) trainShape {
	h, m := float64(c.HiddenSize), float64(c.IntermediateSize)
	d := float64(c.HeadDim)
	q, kv := float64(c.NumAttentionHeads)*d, float64(c.NumKeyValueHeads)*d
	// per token, what the graph saves for backward (the tensors the
	// derivatives read; the rest is garbage once the forward pass drops
	// it): the block's input and the residual sum, each read by its
	// RMSNorm with one reciprocal RMS (2 H + 2); both norms' outputs, read
	// by the projections (2 H); the rotated q and k and the values (Q + 2
	// KV: attention recomputes its weights in the backward pass on the
	// CPU; the CUDA backend keeps heads·T more, which this host-memory
	// estimate leaves out); the attention output as o_proj reads it (Q);
	// the MLP's gate, up and their product, read by SwiGLU and down_proj
	// (3 I): a full fine-tune's; a LoRA run's below. Measured with
	// cmd/benchlora on SmolLM2-135M's shape (docs/benchmarks.md): see the
	// table there against this formula's 2.0 GiB at batch 4 × 512.
	f := 4*h + 2 + 2*q + 2*kv + 3*m
	block, outer := f, 3*h
	if o.LoRARank > 0 {
		// a frozen base: a product keeps its input only for a trained
		// weight's gradient (an adapter's x·Aᵀ), so the first norm's
		// output stays only for adapters on q/k/v_proj, the attention
		// output only for one on o_proj, SwiGLU's product only for one on
		// down_proj; the frozen MLP keeps its input (the second norm's
		// output) and recomputes gate and up in the backward pass
		// (nn.GatedMLP), one layer's 2 I at a time
		targeted := func(names ...string) bool {
			for _, t := range o.targets(true) {
				if slices.Contains(names, t[strings.LastIndexByte(t, '.')+1:]) {
					return true
				}
			}
			return false
		}
		f = 2*h + 2 + q + 2*kv + h
		if targeted("q_proj", "k_proj", "v_proj") {
			f += h
		}
		if targeted("o_proj") {
			f += q
		}
		if targeted("down_proj") {
			f += m
		}
		// inside a checkpointed block the MLP keeps gate and up
		block, outer = f+2*m, outer+2*m
	}
	s := trainShape{params: float64(c.NumParams()), weightBytes: weightBytes(o), weightsDType: weightsDType(o), layers: c.NumHiddenLayers, layerFloats: f, blockFloats: block, carry: h, outer: outer,
		vocab: c.VocabSize, checkpointed: o.ActivationCheckpointing}
	if !o.loraOn16BitBase() {
		s.chunkedHead = c.HiddenSize // nn.Llama.Loss's LinearCrossEntropy takes a float32 head only
	}
	if o.LoRARank > 0 {
		dims := map[string][][2]float64{"q_proj": {{h, q}}, "k_proj": {{h, kv}}, "v_proj": {{h, kv}}, "o_proj": {{q, h}},
			"gate_proj": {{h, m}}, "up_proj": {{h, m}}, "down_proj": {{m, h}}}
		s.addAdapters(o, dims, true)
	}
	return s
}

// weightBytes returns the bytes of one weight of the run's model: 2 for a
// LoRA run on a bfloat16 or float16 base, else 4.
func weightBytes(o *options) float64 {
	if o.loraOn16BitBase() {
		return 2
	}
	return 4
}

// weightsDType returns --dtype for a LoRA run on a 16-bit base, else "".
func weightsDType(o *options) string {
	if o.loraOn16BitBase() {
		return o.Dtype
	}
	return ""
}

// addAdapters adds the adapters of o's targets (in, out of each targeted
// layer of a block, by name) to s: r·(in+out) parameters per layer, and
// per token r floats of x·Aᵀ plus, with dropout, the dropped-out input.
func (s *trainShape) addAdapters(o *options, dims map[string][][2]float64, llama bool) {
	r := float64(o.LoRARank)
	var seen []string
	for _, t := range o.targets(llama) {
		name := t[strings.LastIndexByte(t, '.')+1:]
		if slices.Contains(seen, name) {
			continue
		}
		seen = append(seen, name)
		for _, io := range dims[name] {
			s.adapters += float64(s.layers) * r * (io[0] + io[1])
			s.layerFloats += r
			s.blockFloats += r
			if o.LoRADropout > 0 {
				s.layerFloats += io[0]
				s.blockFloats += io[0]
			}
		}
	}
}

// need returns the estimate of training s on batches of batch × block
// tokens.
func (s trainShape) need(batch, block int) memoryNeed {
	bt := float64(batch) * float64(block)
	trained := s.params
	if s.adapters > 0 {
		trained = s.adapters
	}
	act := float64(s.layers) * s.layerFloats
	if s.checkpointed {
		// each block's input, and one block recomputed with the
		// gradients flowing through it
		block := s.blockFloats
		if block == 0 {
			block = s.layerFloats
		}
		act = float64(s.layers)*s.carry + 2*block
	}
	// the logits, their gradient and the log-softmax of a GPT's loss; a
	// chunk's logits and their gradient with tensor.LinearCrossEntropy,
	// and a trained head's product of a chunk's gradient
	logits := 4 * 3 * bt * float64(s.vocab)
	if s.chunkedHead > 0 {
		logits = 4 * 2 * min(bt*float64(s.vocab), 16<<20)
		if s.adapters == 0 {
			logits += 4 * float64(s.vocab) * float64(s.chunkedHead)
		}
	}
	n := memoryNeed{
		weights:      s.weightBytes * s.params,
		adapters:     4 * s.adapters,
		optimizer:    4 * 3 * trained, // gradients and AdamW's two moments
		activations:  4 * bt * (act + s.outer),
		logits:       logits,
		what:         "training",
		weightsName:  "weights",
		frozen:       s.adapters > 0,
		weightsDType: s.weightsDType,
		checkpointed: s.checkpointed,
		split:        true,
	}
	return n
}

// line is the estimate as describeMemory prints it: "memory: weights
// 540 MiB (frozen), adapters 1.2 MiB, gradients and AdamW state 3.5 MiB,
// activations 310 MiB (checkpointed), logits 2.3 GiB = ~6.3 GiB with the
// garbage collector's headroom".
func (m memoryNeed) line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "memory: weights %s", formatBytes(m.weights))
	switch {
	case m.frozen && m.weightsDType != "":
		fmt.Fprintf(&b, " (frozen, %s)", m.weightsDType)
	case m.frozen:
		b.WriteString(" (frozen)")
	}
	if m.adapters > 0 {
		fmt.Fprintf(&b, ", adapters %s", formatBytes(m.adapters))
	}
	fmt.Fprintf(&b, ", gradients and AdamW state %s, activations %s", formatBytes(m.optimizer), formatBytes(m.activations))
	if m.checkpointed {
		b.WriteString(" (checkpointed)")
	}
	fmt.Fprintf(&b, ", logits %s = ~%s with the garbage collector's headroom", formatBytes(m.logits), formatBytes(m.total()))
	return b.String()
}

// trainShapeOf returns the shape of the run: the Llama-family model's
// (llama non-nil) or the GPT of o's flags with vocab tokens.
func trainShapeOf(o *options, vocab int, llama *nn.LlamaConfig) trainShape {
	if llama != nil {
		return llamaShape(*llama, o)
	}
	return gptShape(nn.GPTConfig{VocabSize: vocab, BlockSize: o.BlockSize, NLayer: o.NLayer, NHead: o.NHead,
		NEmbd: o.NEmbd, Dropout: float32(o.Dropout), Bias: o.Bias}, o)
}

// knownLlama returns the Llama-family config of the run, known before the
// weights are read: the pretrained model's or the checkpoint's, else nil.
func knownLlama(pre *pretrainedModel, meta *ckptMeta) *nn.LlamaConfig {
	switch {
	case pre != nil:
		return pre.llama
	case meta != nil:
		return meta.Llama
	}
	return nil
}

// describeMemory prints the memory estimate of the run.
func describeMemory(w io.Writer, o *options, vocab int, llama *nn.LlamaConfig) {
	fmt.Fprintln(w, trainShapeOf(o, vocab, llama).need(o.BatchSize, o.BlockSize).line())
}
