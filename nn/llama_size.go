package nn

import "fmt"

// NumParams returns the number of parameters of a Llama-family model of c
// (a tied lm_head counted once), computed from the sizes alone, without
// building anything; math.MaxInt64 when the count does not fit in an
// int64. c's sizes must not be negative.
func (c LlamaConfig) NumParams() int64 { return clampInt64(c.numParams()) }

// numParams is NumParams in float64, exact below 2^53.
func (c LlamaConfig) numParams() float64 {
	v, h, m, l := float64(c.VocabSize), float64(c.HiddenSize), float64(c.IntermediateSize), float64(c.NumHiddenLayers)
	d := float64(c.HeadDim)
	if c.HeadDim == 0 && c.NumAttentionHeads > 0 {
		d = h / float64(c.NumAttentionHeads)
	}
	q, kv := float64(c.NumAttentionHeads)*d, float64(c.NumKeyValueHeads)*d
	perLayer := h*q + 2*h*kv + q*h + 3*h*m + 2*h // q, k, v, o; gate, up, down; the two RMSNorms
	if c.QKVBias {
		perLayer += q + 2*kv
	}
	if c.OBias {
		perLayer += h
	}
	if c.MLPBias {
		perLayer += 2*m + h
	}
	if c.QKNorm {
		perLayer += 2 * d
	}
	n := v*h + l*perLayer + h // embed_tokens, the layers, model.norm
	if !c.TieWordEmbeddings {
		n += v * h
	}
	return n
}

// checkSize returns an error wrapping ErrTooLarge when the float32
// parameters of a model of c would exceed tensor.MaxAllocBytes, naming
// c's sizes and the bytes: what LoadCausalLM, the checkpoint readers and
// NewLlama check before they allocate anything.
func (c LlamaConfig) checkSize() error {
	over, bytes, limit := overBudget(c.numParams())
	if !over {
		return nil
	}
	return fmt.Errorf("%w: a %s model of vocab_size %d, hidden_size %d, intermediate_size %d, num_hidden_layers %d has %.4g parameters, %s as float32, above the allocation limit of %s (tensor.MaxAllocBytes: the machine's memory unless set lower, as train's --max_memory does)",
		ErrTooLarge, c.ModelType, c.VocabSize, c.HiddenSize, c.IntermediateSize, c.NumHiddenLayers, c.numParams(), formatBytes(bytes), formatBytes(float64(limit)))
}

// maxConfigBytes bounds a config.json (GPT-2's is 665 bytes, the largest
// of the hub's a few tens of KB).
const maxConfigBytes = 16 << 20
