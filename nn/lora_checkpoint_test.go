package nn_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/optim"
	"github.com/wickml/wick/tensor"
	"github.com/wickml/wick/tokenizer"
)

// A checkpoint of a LoRA run holds the base model, the adapters and their
// optimizer state: LoadCheckpoint returns the adapted model, and the base
// tensors alone load into a plain model.
func TestSaveCheckpointLoRA(t *testing.T) {
	tok := tokenizer.NewChar([]byte(userLoopText))
	cfg := nn.LlamaConfig{ModelType: "llama", VocabSize: tok.VocabSize(), HiddenSize: 16, IntermediateSize: 24, NumHiddenLayers: 2,
		NumAttentionHeads: 4, NumKeyValueHeads: 2, HeadDim: 4, MaxPositionEmbeddings: 32, RMSNormEps: 1e-6, RopeTheta: 10000}
	model := nn.NewLlamaWith(cfg, tensor.NewGenerator(5))
	base := nn.NewLlamaWith(cfg, tensor.NewGenerator(5))
	lora, err := nn.ApplyLoRA(model, nn.LoRAConfig{R: 2, Alpha: 8, Dropout: 0.1, TargetModules: []string{"q_proj", "v_proj"}, Gen: tensor.NewGenerator(6)})
	if err != nil {
		t.Fatal(err)
	}
	opt := optim.NewAdamW(lora.Parameters(), optim.AdamWConfig{LR: 1e-2})
	ids := tok.Encode(userLoopText)
	x, y := tensor.FromInts(ids[:16], 1, 16), tensor.FromInts(ids[1:17], 1, 16)
	for range 3 {
		model.Loss(x, y).Backward()
		opt.Step()
		opt.ZeroGrad()
	}
	model.Eval()
	want := model.Forward(x).Float32s()
	if slices.Equal(want, base.Forward(x).Float32s()) {
		t.Fatal("training the adapters did not change the logits")
	}
	path := filepath.Join(t.TempDir(), "ckpt.safetensors")
	if err := nn.SaveCheckpoint(path, &nn.Checkpoint{LM: model, Adapter: lora, Tokenizer: tok, Iter: 3, Optimizer: opt.StateDict()}); err != nil {
		t.Fatal(err)
	}
	ck, err := nn.LoadCheckpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	if ck.Adapter == nil || !slices.Equal(ck.Adapter.Modules(), lora.Modules()) || ck.Adapter.Config.R != 2 || ck.Adapter.Config.Alpha != 8 {
		t.Fatalf("adapter read back: %+v", ck.Adapter)
	}
	if got := ck.LM.Forward(x).Float32s(); !slices.Equal(got, want) {
		t.Error("logits after LoadCheckpoint differ from the adapted model's")
	}
	rd, err := nn.ReadCheckpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	plain := nn.NewLlamaWith(cfg, tensor.NewGenerator(1))
	if err := nn.LoadStateDict(plain, rd.Tensors.WithoutPrefix(nn.OptimizerPrefix).WithoutPrefix(nn.AdapterPrefix)); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(plain.Forward(x).Float32s(), base.Forward(x).Float32s()) {
		t.Error("the checkpoint's base weights are not the frozen base model's")
	}
	lora.Merge()
	err = nn.SaveCheckpoint(path, &nn.Checkpoint{LM: model, Adapter: lora, Tokenizer: tok, Iter: 3})
	if err == nil || !strings.Contains(err.Error(), "merged") {
		t.Errorf("saving merged adapters: err = %v, want a refusal", err)
	}
}
