package nn

import "github.com/wickml/wick/tensor"

// CausalLM is a decoder-only language model of any family (nanoGPT's GPT,
// GPT-2, the Llama family): what generation, loading, the train CLI and
// fine-tuning need to know of a model, so that none of them depends on
// which family it holds. *GPT and *Llama implement it; LoadCausalLM
// returns one.
//
// Forward, Loss and ForwardCached may run on many goroutines at once on a
// model in evaluation mode that nobody changes meanwhile; each
// generation's KVCache belongs to one goroutine.
type CausalLM interface {
	Module
	// Forward returns the logits [B, T, VocabSize] of the Int64 tokens
	// idx [B, T] at positions 0 … T−1.
	Forward(idx *tensor.Tensor) *tensor.Tensor
	// Loss returns the mean cross-entropy of the logits of idx [B, T]
	// against targets [B, T], ignoring targets equal to -1.
	Loss(idx, targets *tensor.Tensor) *tensor.Tensor
	// ModelType names the family as config.json's model_type does:
	// "gpt2" (also for nanoGPT's GPT), "llama", "mistral", "qwen2", "qwen3".
	ModelType() string
	// VocabSize is the number of tokens (the logits' last dimension).
	VocabSize() int
	// ContextSize is the longest context the model was built for:
	// nanoGPT's block_size, Hugging Face's n_positions or
	// max_position_embeddings. Generate crops longer contexts.
	ContextSize() int
	// EOSTokenIDs are the end-of-sequence tokens of the model's
	// config.json (eos_token_id, an int or a list), at which Generate
	// stops; nil when it names none.
	EOSTokenIDs() []int
	// NewKVCache returns an empty key/value cache for batch rows of up to
	// capacity positions, on the model's device, laid out as the model's
	// ForwardCached needs (sized by its key/value heads).
	NewKVCache(batch, capacity int) *KVCache
	// ForwardCached runs idx [B, T] at positions cache.Len …
	// cache.Len+T−1, appending their keys and values to cache, and
	// returns the logits of the last of them, [B, VocabSize]: the same
	// numbers as the last position of Forward over every token so far.
	ForwardCached(idx *tensor.Tensor, cache *KVCache) *tensor.Tensor
}

var (
	_ CausalLM = (*GPT)(nil)
	_ CausalLM = (*Llama)(nil)
)

// KVCache holds the keys and values of the positions one generation has
// seen so far, per layer, in the layout of the model that made it
// (CausalLM.NewKVCache): for the Llama family [B, key/value heads,
// Capacity, head_dim], for GPT [B, Capacity, n_embd].
type KVCache struct {
	K, V     []*tensor.Tensor // per layer
	Len      int              // positions filled
	Capacity int              // positions it can hold
}
