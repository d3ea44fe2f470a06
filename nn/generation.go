package nn

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/chewxy/math32"
	"github.com/wickml/wick/autograd"
	"github.com/wickml/wick/tensor"
)

// GenerateOptions says how Generate extends a prompt. The zero value
// (with MaxNewTokens set) samples greedily until the model's EOS tokens.
type GenerateOptions struct {
	// MaxNewTokens bounds the tokens added to each row.
	MaxNewTokens int
	// Temperature divides the logits before sampling; 0 picks the most
	// likely token (greedy, the first of equal ones), without drawing.
	Temperature float32
	// TopK, when positive, keeps only the TopK most likely tokens (ties
	// with the TopK-th kept, as nanoGPT does) before sampling.
	TopK int
	// TopP, when in (0, 1), keeps the smallest set of most likely tokens
	// whose probabilities (after temperature and TopK) sum to at least
	// TopP (nucleus sampling, as Hugging Face's TopPLogitsWarper).
	TopP float32
	// StopTokenIDs end a row once it produces one of them (the token is
	// kept), in addition to the model's EOSTokenIDs.
	StopTokenIDs []int
	// IgnoreEOS leaves the model's EOSTokenIDs out of the stop tokens.
	IgnoreEOS bool
	// StopStrings end a row once the text of its new tokens, as Decoder
	// decodes them, contains one of them (the tokens that complete it are
	// kept, as Hugging Face's StopStringCriteria keeps them). They need
	// Decoder: any tokenizer.Tokenizer is one.
	StopStrings []string
	Decoder     interface{ Decode(ids []int) string }
	// Generator draws the samples (the global generator if nil).
	Generator *tensor.Generator
	// Context, if not nil, stops the generation between two tokens once
	// it is done; Generate then returns the rows so far and its error.
	Context context.Context
}

// Generate extends each row of the Int64 prompt idx [B, T] (T ≥ 1) by up
// to opts.MaxNewTokens tokens from m and returns [B, T+n]. The prompt runs
// through the model once, keeping every layer's keys and values in a
// KVCache of this call's own; each further token costs one position's
// forward pass, with the numbers of recomputing the whole context. Once
// the context exceeds m.ContextSize() it is cropped to the last
// ContextSize tokens and recomputed for every token (nanoGPT's rule; the
// positions shift, so no cached entry stays valid).
//
// Each step takes the last position's logits and, with Temperature 0,
// the most likely token; otherwise the logits divided by Temperature,
// restricted by TopK and TopP, give the probabilities a token is drawn
// from with opts.Generator. A row stops after producing a stop token
// (StopTokenIDs and, unless IgnoreEOS, m.EOSTokenIDs()); generation ends
// when every row has stopped, and rows that stopped earlier are padded
// with the stop token they produced (or, after a stop string, with their
// last token). It records nothing on the tape.
//
// Many goroutines may call Generate on one model in evaluation mode at
// once (each call has its own cache); with a Generator of its own each
// returns what it would alone. It returns an error only from
// opts.Context, when it stopped the generation before the last token.
// Generate panics if idx is not Int64 [B, T] with T ≥ 1,
// Temperature is negative or NaN, TopP is negative, or StopStrings are
// given without a Decoder.
func Generate(m CausalLM, idx *tensor.Tensor, opts GenerateOptions) (*tensor.Tensor, error) {
	checkTokens("Generate", idx)
	if !(opts.Temperature >= 0) || !(opts.TopP >= 0) {
		panic(&tensor.Error{Pkg: "nn", Op: "Generate", Msg: fmt.Sprintf("temperature and top_p must be non-negative, got %v and %v", opts.Temperature, opts.TopP)})
	}
	if len(opts.StopStrings) > 0 && opts.Decoder == nil {
		panic(&tensor.Error{Pkg: "nn", Op: "Generate", Msg: fmt.Sprintf("stop strings %q need a Decoder", opts.StopStrings)})
	}
	var stop func() bool
	if ctx := opts.Context; ctx != nil {
		stop = func() bool { return ctx.Err() != nil }
	}
	recompute := false
	if d, ok := m.(interface{ dropoutActive() bool }); ok {
		recompute = d.dropoutActive()
	}
	out, stopped := generateLoop(m, idx, opts, recompute, nil, stop)
	if stopped {
		return out, opts.Context.Err()
	}
	return out, nil
}

// lastLogitser is implemented by models with their own way to compute the
// last position's logits [B, V] of idx without a cache (GPT's, which
// keeps the numbers its generation always had).
type lastLogitser interface {
	lastLogits(idx *tensor.Tensor) *tensor.Tensor
}

// generateLoop is Generate; with recompute set it runs the whole cropped
// context through the model for every token. observe, if not nil, sees
// each step's last-position logits [B, VocabSize] before temperature and
// top-k; stop, if not nil, ends the generation before a token when it
// returns true, and generateLoop then reports that it stopped early.
func generateLoop(m CausalLM, idx *tensor.Tensor, opts GenerateOptions, recompute bool, observe func(*tensor.Tensor), stop func() bool) (out *tensor.Tensor, stopped bool) {
	stopIDs := slices.Clone(opts.StopTokenIDs)
	if !opts.IgnoreEOS {
		stopIDs = append(stopIDs, m.EOSTokenIDs()...)
	}
	ctxSize, maxNew := m.ContextSize(), opts.MaxNewTokens
	b := idx.Size(0)
	var generated [][]int // each row's new tokens, for the stop strings
	if len(opts.StopStrings) > 0 {
		generated = make([][]int, b)
	}
	done := make([]int, b) // the stop token a finished row produced, else -1
	for i := range done {
		done[i] = -1
	}
	autograd.NoGrad(func() {
		var cache *KVCache
		for step := range maxNew {
			if stop != nil && stop() {
				stopped = true
				return
			}
			t := idx.Size(1)
			cropped := recompute || t > ctxSize
			switch {
			case cropped:
				cache = nil // positions have shifted
			case cache == nil || cache.Len != t-1:
				// the prefill: room for every position this call can
				// reach before the context is cropped
				cache = m.NewKVCache(b, min(ctxSize, t+maxNew-step-1))
			}
			// one step: the next token of each row [B] from the last
			// position's logits [B, V]
			pick := func() *tensor.Tensor {
				var logits *tensor.Tensor
				switch {
				case cropped:
					cond := idx
					if t > ctxSize {
						cond = idx.Slice(1, t-ctxSize, t)
					}
					if l, ok := m.(lastLogitser); ok {
						logits = l.lastLogits(cond)
					} else {
						all := m.Forward(cond)
						logits = all.Select(1, all.Size(1)-1)
					}
				case cache.Len == t-1:
					logits = m.ForwardCached(idx.Slice(1, t-1, t), cache)
				default:
					logits = m.ForwardCached(idx, cache)
				}
				if observe != nil {
					observe(logits)
				}
				return pickTokens(logits, opts)
			}
			var next []int
			if observe == nil {
				// every tensor of the step but the tokens is a temporary
				// (the cache was made outside): its memory serves the next
				// step's tensors instead of waiting for the collector
				next = tensor.Scope(pick).Ints()
			} else {
				next = pick().Ints()
			}
			finished := len(stopIDs) > 0 || generated != nil
			for r := range next {
				switch {
				case done[r] >= 0:
					next[r] = done[r]
				case slices.Contains(stopIDs, next[r]):
					done[r] = next[r]
				case generated != nil:
					generated[r] = append(generated[r], next[r])
					if containsAny(opts.Decoder.Decode(generated[r]), opts.StopStrings) {
						done[r] = next[r]
					}
				}
				finished = finished && done[r] >= 0
			}
			idx = tensor.Cat([]*tensor.Tensor{idx, tensor.FromInts(next, b, 1).To(idx.Device())}, 1)
			if finished {
				return
			}
		}
	})
	return idx, stopped
}

// containsAny reports whether s contains one of subs.
func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// pickTokens returns the next token [B] of each row of logits [B, V] as
// opts says.
func pickTokens(logits *tensor.Tensor, opts GenerateOptions) *tensor.Tensor {
	if opts.Temperature == 0 {
		return logits.ArgMax(-1)
	}
	logits = logits.DivScalar(opts.Temperature)
	if opts.TopK > 0 && opts.TopK < logits.Size(1) {
		logits = keepTopK(logits, opts.TopK)
	}
	if opts.TopP > 0 && opts.TopP < 1 {
		logits = keepTopP(logits, opts.TopP)
	}
	return opts.Generator.Multinomial(logits.Softmax(-1)).Reshape(-1)
}

// keepTopP sets to -Inf every logit outside the smallest set of most
// likely tokens of its row whose probabilities sum to at least p (the
// most likely token always stays).
func keepTopP(logits *tensor.Tensor, p float32) *tensor.Tensor {
	rows, n := logits.Size(0), logits.Size(1)
	probs := logits.Softmax(-1).Float32s()
	vals := logits.Float32s()
	order := make([]int, n)
	for r := range rows {
		row, pr := vals[r*n:(r+1)*n], probs[r*n:(r+1)*n]
		if keep, ok := nucleus(pr, p); ok { // sample.go
			kept := make([]bool, n)
			for _, i := range keep {
				kept[i] = true
			}
			for i, k := range kept {
				if !k {
					row[i] = math32.Inf(-1)
				}
			}
			continue
		}
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(i, j int) bool { return pr[order[i]] > pr[order[j]] })
		var sum float32
		for k, i := range order {
			if k > 0 && sum >= p {
				row[i] = math32.Inf(-1)
			}
			sum += pr[i]
		}
	}
	return tensor.New(vals, rows, n).To(logits.Device())
}
