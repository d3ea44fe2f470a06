package main

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
	"github.com/wickml/wick/tokenizer"
)

// Sizes a run cannot have. Before anything is allocated, train and train
// sample check (1) that the sizes from the flags or from a checkpoint lie
// within sane bounds, far above any model this program can train but low
// enough that no product of them overflows, and (2) that the memory the
// run would allocate fits in the memory available: MemAvailable from
// /proc/meminfo, or --max_memory. Either failure is one error line, exit
// status 1, within milliseconds.

// sizeBounds are the largest values the size flags (and a checkpoint's
// model and config) may take. GPT-3 175B has 96 layers, 96 heads, a width
// of 12288 and a context of 2048 tokens.
var sizeBounds = []struct {
	flag string
	max  int
	get  func(o *options) int
}{
	{"n_layer", 1 << 12, func(o *options) int { return o.NLayer }},
	{"n_head", 1 << 12, func(o *options) int { return o.NHead }},
	{"n_embd", 1 << 17, func(o *options) int { return o.NEmbd }},
	{"block_size", 1 << 20, func(o *options) int { return o.BlockSize }},
	{"batch_size", 1 << 20, func(o *options) int { return o.BatchSize }},
	{"gradient_accumulation_steps", 1 << 20, func(o *options) int { return o.GradAccum }},
	{"eval_iters", 1 << 24, func(o *options) int { return o.EvalIters }},
	{"num_samples", 1 << 20, func(o *options) int { return o.NumSamples }},
	{"num_tokens", 1 << 24, func(o *options) int { return o.NumTokens }},
	{"top_k", 1 << 24, func(o *options) int { return o.TopK }},
}

// checkBounds returns an error naming the first size flag of o above its
// bound.
func (o *options) checkBounds() error {
	for _, b := range sizeBounds {
		if v := b.get(o); v > b.max {
			return fmt.Errorf("--%s=%d is out of range (at most %d)", b.flag, v, b.max)
		}
	}
	return nil
}

// checkBounds returns an error if the checkpoint's config (the run's flags)
// has a size outside the bounds that train itself accepts: such a
// checkpoint was not written by train. nn.ReadCheckpoint bounds the
// model's sizes (nn.MaxCheckpointLayers and its siblings).
func (m *ckptMeta) checkBounds() error {
	for _, b := range sizeBounds {
		if v := b.get(m.Options); v < 0 || v > b.max {
			return fmt.Errorf("config %s=%d is out of range (0 to %d)", b.flag, v, b.max)
		}
	}
	return nil
}

// memoryNeed is what a run would allocate, in bytes, by purpose.
type memoryNeed struct {
	weights     float64 // parameters, and in training their gradients and AdamW's two moments
	weightsName string  // what weights counts, for the message
	activations float64 // what one training step keeps for backward, or one sampling step
	logits      float64 // logits and their softmax and gradient
	what        string  // "training" or "sampling"

	// split estimates (lora_memory.go) count the weights alone in weights,
	// and these apart:
	adapters     float64 // LoRA adapters' parameters
	optimizer    float64 // gradients and AdamW's moments of the trained parameters
	frozen       bool    // the weights do not train (LoRA)
	weightsDType string  // the weights' dtype when not float32 (a 16-bit LoRA base)
	checkpointed bool    // activations with --activation_checkpointing
	split        bool
}

// advice names the flags that size the largest part of m.
func (m memoryNeed) advice() string {
	switch {
	case m.what == "sampling" && m.weights < m.activations+m.logits:
		return "--num_samples"
	case m.frozen && m.weights >= m.activations && m.weights >= m.logits:
		return "--batch_size or --block_size (the frozen weights are the model's)"
	case m.weights >= m.activations && m.weights >= m.logits:
		return "--n_layer or --n_embd (or --block_size, the vocabulary)"
	case m.activations >= m.logits && m.split && !m.checkpointed:
		return "--batch_size or --block_size, or give --activation_checkpointing"
	case m.activations >= m.logits:
		return "--batch_size or --block_size (or --n_layer, --n_embd)"
	}
	return "--batch_size or --block_size (or the vocabulary)"
}

// gcHeadroom is how much more memory than its live data a Go process
// takes at its peak: the collector lets the heap grow to twice the live
// data before it collects (GOGC=100). Measured peak RSS of train on
// tinyshakespeare, 3 steps (cmd/train/limits.go's estimate × 2 → RSS):
// 4/4/128, batch 64, block 256: 1.71 GiB → 1.85 GiB; 6/6/192, batch 8,
// block 512, dropout 0.1: 4.25 GiB → 4.55 GiB.
const gcHeadroom = 2

// total is the estimated peak, with the collector's headroom.
func (m memoryNeed) total() float64 {
	return gcHeadroom * (m.weights + m.adapters + m.optimizer + m.activations + m.logits)
}

// paramCount returns the number of parameters of a GPT with config c
// (nn.NumParams of nn.NewGPT(c), without building it).
func paramCount(c nn.GPTConfig) float64 {
	C, L := float64(c.NEmbd), float64(c.NLayer)
	perLayer := 12 * C * C // c_attn 3C², attn c_proj C², mlp c_fc 4C², c_proj 4C²
	lnParams := 1.0
	if c.Bias {
		perLayer += 3*C + C + 4*C + C // the four Linear biases
		lnParams = 2
	}
	perLayer += 2 * lnParams * C // ln_1, ln_2
	return float64(c.VocabSize)*C + float64(c.BlockSize)*C + L*perLayer + lnParams*C
}

// perToken returns the floats a transformer block keeps per token of a
// batch for backward: the LayerNorms' inputs and outputs (4 C), the packed
// q/k/v (3 C), the attention output (C), the MLP's 4C-wide hidden layer
// before and after GELU (8 C); the fused attention recomputes its weights
// in the backward pass on the CPU (the CUDA backend keeps H·T more, which
// this host-memory estimate leaves out). With dropout, attention takes the
// explicit path that keeps copies of the weights (H·T each: the scores,
// masked, softmax, dropout mask and output; six counted) and the residual
// dropouts keep masks and outputs (22 C in all).
func perToken(c nn.GPTConfig, t int) float64 {
	att, width := 0.0, 16.0
	if c.Dropout > 0 {
		att, width = 6*float64(c.NHead)*float64(t), 22
	}
	return width*float64(c.NEmbd) + att
}

// samplingNeed estimates the memory of generating numSamples texts at
// once: the parameters (with their gradients and AdamW's moments after
// training, which still hold them), one layer's activations over a full
// context per sample (nothing is kept for backward, but the collector
// frees the previous layer's late, so two are counted), and the last
// position's logits.
func samplingNeed(c nn.GPTConfig, numSamples int, afterTraining bool) memoryNeed {
	st := float64(numSamples) * float64(c.BlockSize)
	weights, name := 4*paramCount(c), "parameters"
	if afterTraining {
		weights, name = 4*weights, "parameters, gradients and AdamW state"
	}
	return memoryNeed{
		weights:     weights,
		activations: 4 * 2 * st * perToken(c, c.BlockSize),
		logits:      4 * 3 * float64(numSamples) * float64(c.VocabSize),
		what:        "sampling",
		weightsName: name,
	}
}

// checkTrainMemory checks that training the model of the run (the
// Llama-family model llama, or the GPT of o's flags) with a vocabulary of
// vocab tokens, and sampling from it at the end, fit in the available
// memory (see checkMemory and lora_memory.go).
func checkTrainMemory(o *options, vocab int, llama *nn.LlamaConfig) error {
	c := nn.GPTConfig{VocabSize: vocab, BlockSize: o.BlockSize, NLayer: o.NLayer, NHead: o.NHead,
		NEmbd: o.NEmbd, Dropout: float32(o.Dropout), Bias: o.Bias}
	train := trainShapeOf(o, vocab, llama).need(o.BatchSize, o.BlockSize)
	sample := samplingNeed(c, o.NumSamples, false)
	sample.weights = train.weights + train.adapters + train.optimizer
	sample.weightsName = "parameters, gradients and AdamW state"
	return checkMemory(o, train, sample)
}

// knownVocab returns the model's vocabulary size known before the corpus
// is read: the pretrained model's, the checkpoint's or GPT-2's tokenizer's
// (tok), bpe's --vocab_size, or 1 for a new char tokenizer.
func knownVocab(o *options, meta *ckptMeta, tok tokenizer.Tokenizer, pre *pretrainedModel) int {
	switch {
	case meta != nil && meta.Llama != nil:
		return meta.Llama.VocabSize
	case meta != nil:
		return meta.Model.VocabSize
	case pre != nil:
		return pre.vocabSize()
	case tok != nil:
		return tok.VocabSize()
	case o.Tokenizer == "bpe":
		return o.VocabSize
	}
	return 1
}

// checkSampleMemory checks that sampling o.NumSamples texts from the model
// c fits in the available memory.
func checkSampleMemory(o *options, c nn.GPTConfig) error {
	return checkMemory(o, samplingNeed(c, o.NumSamples, false))
}

// availableMemory returns the memory a run may use, in bytes, and where
// the number comes from: --max_memory when given, else MemAvailable from
// /proc/meminfo; ok is false when neither is known (no check is made).
func availableMemory(o *options) (bytes int64, source string, ok bool) {
	if o.MaxMemory > 0 {
		return int64(o.MaxMemory), "allowed by --max_memory", true
	}
	if m, err := memAvailable(); err == nil {
		return m, "available (MemAvailable in /proc/meminfo; --max_memory overrides)", true
	}
	return 0, "", false
}

// memAvailable reads MemAvailable from /proc/meminfo.
func memAvailable() (int64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 3 && fields[0] == "MemAvailable:" && fields[2] == "kB" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil || kb <= 0 || kb > math.MaxInt64>>10 {
				return 0, fmt.Errorf("/proc/meminfo: bad MemAvailable %q", fields[1])
			}
			return kb << 10, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New("/proc/meminfo has no MemAvailable")
}

// checkMemory returns an error if the run described by needs would not
// fit in the available memory. With --max_memory it also caps each tensor
// (tensor.SetMaxAllocBytes), so that a size the estimate misses still
// fails with one line instead of exhausting memory.
func checkMemory(o *options, needs ...memoryNeed) error {
	avail, source, ok := availableMemory(o)
	if !ok {
		return nil
	}
	if o.MaxMemory > 0 {
		tensor.SetMaxAllocBytes(int64(o.MaxMemory))
	}
	for _, n := range needs {
		if n.total() <= float64(avail) {
			continue
		}
		parts := fmt.Sprintf("%s %s", n.weightsName, formatBytes(n.weights))
		if n.split {
			line := n.line()
			parts = strings.TrimPrefix(line[:strings.LastIndex(line, " = ~")], "memory: ")
			return fmt.Errorf("%s would need about %s (%s, twice that for the garbage collector), more than the %s %s; lower %s",
				n.what, formatBytes(n.total()), parts, formatBytes(float64(avail)), source, n.advice())
		}
		return fmt.Errorf("%s would need about %s (%s, activations %s, logits %s, twice that for the garbage collector), more than the %s %s; lower %s",
			n.what, formatBytes(n.total()), parts, formatBytes(n.activations), formatBytes(n.logits),
			formatBytes(float64(avail)), source, n.advice())
	}
	return nil
}

// formatBytes writes b with a binary unit: "2.5 TiB", "512 MiB".
func formatBytes(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"}
	u := 0
	for b >= 1024 && u < len(units)-1 {
		b /= 1024
		u++
	}
	return strconv.FormatFloat(b, 'g', 3, 64) + " " + units[u]
}

// byteSize is a --max_memory value: a number of bytes, written as an
// integer with an optional unit (KiB, MiB, GiB, TiB: powers of 1024; KB,
// MB, GB, TB: powers of 1000; B), or "auto" (0) for MemAvailable.
type byteSize int64

// String returns the value in bytes, or "auto".
func (b *byteSize) String() string {
	if *b == 0 {
		return "auto"
	}
	return strconv.FormatInt(int64(*b), 10)
}

// Set parses s.
func (b *byteSize) Set(s string) error {
	v, err := parseByteSize(s)
	if err != nil {
		return err
	}
	*b = byteSize(v)
	return nil
}

// parseByteSize parses "8GiB", "512MiB", "2GB", "1048576" or "auto".
func parseByteSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "auto" {
		return 0, nil
	}
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1}}
	num, mult := s, int64(1)
	for _, u := range units {
		if strings.HasSuffix(strings.ToLower(s), strings.ToLower(u.suffix)) {
			num, mult = strings.TrimSpace(s[:len(s)-len(u.suffix)]), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || !(v > 0) || v*float64(mult) >= math.MaxInt64 {
		return 0, errors.New(`want a positive size such as 8GiB, 512MiB, 2GB or 1048576 (bytes), or auto`)
	}
	if b := v * float64(mult); b < 1 || (mult == 1 && b != math.Trunc(b)) {
		return 0, fmt.Errorf("%s is not a whole number of bytes: give a unit, such as %sGiB or %sMiB", s, num, num)
	}
	return int64(v * float64(mult)), nil
}
