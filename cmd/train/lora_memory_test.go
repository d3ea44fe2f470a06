package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
)

// smolLM2 is SmolLM2-135M's shape.
var smolLM2 = nn.LlamaConfig{ModelType: "llama", VocabSize: 49152, HiddenSize: 576, IntermediateSize: 1536, NumHiddenLayers: 30,
	NumAttentionHeads: 9, NumKeyValueHeads: 3, HeadDim: 64, MaxPositionEmbeddings: 8192, RMSNormEps: 1e-5, RopeTheta: 100000, TieWordEmbeddings: true}

// TestFineTuneEstimate: the estimate counts the frozen weights once, the
// optimizer state of the adapters only, and checkpointed activations as
// each block's input plus one block.
func TestFineTuneEstimate(t *testing.T) {
	o := defaultOptions()
	o.BatchSize, o.BlockSize = 4, 512
	full := trainShapeOf(o, 0, &smolLM2).need(o.BatchSize, o.BlockSize)
	o.LoRARank, o.LoRATargets = 8, "q_proj,k_proj,v_proj,o_proj"
	lora := trainShapeOf(o, 0, &smolLM2).need(o.BatchSize, o.BlockSize)
	o.ActivationCheckpointing = true
	ckpt := trainShapeOf(o, 0, &smolLM2).need(o.BatchSize, o.BlockSize)

	p := float64(smolLM2.NumParams())
	if full.weights != 4*p || full.optimizer != 12*p || full.adapters != 0 || full.frozen {
		t.Errorf("full fine-tune: weights %v, optimizer %v, adapters %v; want %v, %v, 0", full.weights, full.optimizer, full.adapters, 4*p, 12*p)
	}
	// rank 8 on q (576→576), k and v (576→192), o (576→576) in 30 layers
	adapters := 30.0 * 8 * ((576 + 576) + 2*(576+192) + (576 + 576))
	if lora.weights != 4*p || lora.adapters != 4*adapters || lora.optimizer != 12*adapters || !lora.frozen {
		t.Errorf("lora: weights %v, adapters %v, optimizer %v; want %v, %v, %v", lora.weights, lora.adapters, lora.optimizer, 4*p, 4*adapters, 12*adapters)
	}
	// the frozen projections keep no inputs and the frozen MLP keeps its
	// input instead of gate and up (measured at this shape: 0.97 GiB
	// against the full fine-tune's 2.02 GiB)
	if !(lora.activations < 0.5*full.activations) {
		t.Errorf("lora activations %v, full fine-tune's %v: want less than half", lora.activations, full.activations)
	}
	if !(ckpt.activations < 0.4*lora.activations) || ckpt.logits != lora.logits {
		t.Errorf("checkpointed activations %v, plain %v: want less than 0.4×", ckpt.activations, lora.activations)
	}
	if !(lora.total() < full.total()-gcHeadroom*10*p) {
		t.Errorf("lora total %v, full %v", lora.total(), full.total())
	}
	line := ckpt.line()
	re := regexp.MustCompile(`^memory: weights [0-9.]+ MiB \(frozen\), adapters [0-9.]+ (KiB|MiB), gradients and AdamW state [0-9.]+ MiB, activations [0-9.]+ (MiB|GiB) \(checkpointed\), logits [0-9.]+ (MiB|GiB) = ~[0-9.]+ GiB with the garbage collector's headroom$`)
	if !re.MatchString(line) {
		t.Errorf("line %q", line)
	}
	if l := full.line(); strings.Contains(l, "frozen") || strings.Contains(l, "adapters") || strings.Contains(l, "checkpointed") {
		t.Errorf("full fine-tune line %q", l)
	}
}

// A run whose frozen weights and adapters fit where a full fine-tune does
// not passes the guard, and the refusal names the parts.
func TestFineTuneMemoryGuard(t *testing.T) {
	defer tensor.SetMaxAllocBytes(tensor.MaxAllocBytes()) // checkMemory sets it from --max_memory
	o := defaultOptions()
	o.BatchSize, o.BlockSize, o.NumSamples = 1, 64, 1
	full := trainShapeOf(o, 0, &smolLM2).need(o.BatchSize, o.BlockSize)
	o.MaxMemory = byteSize(full.total() * 0.6)
	err := checkTrainMemory(o, 0, &smolLM2)
	if err == nil || !strings.Contains(err.Error(), "gradients and AdamW state") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("full fine-tune in %v bytes: err = %v", o.MaxMemory, err)
	}
	o.LoRARank, o.LoRATargets = 8, "q_proj,v_proj"
	if err := checkTrainMemory(o, 0, &smolLM2); err != nil {
		t.Errorf("lora in %v bytes: %v", o.MaxMemory, err)
	}
}
