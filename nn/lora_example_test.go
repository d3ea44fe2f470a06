package nn_test

import (
	"fmt"
	"os"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/optim"
	"github.com/wickml/wick/tensor"
)

// LoRA on the attention projections of a small GPT: only the adapters
// train, and they are saved in PEFT's layout.
func ExampleApplyLoRA() {
	model := nn.NewGPTWith(nn.GPTConfig{VocabSize: 32, BlockSize: 8, NLayer: 2, NHead: 2, NEmbd: 16}, tensor.NewGenerator(1))
	lora, err := nn.ApplyLoRA(model, nn.LoRAConfig{R: 4, Alpha: 8, TargetModules: []string{"c_attn"}})
	if err != nil {
		panic(err)
	}
	fmt.Println(lora.Modules())
	fmt.Println(nn.NumParams(lora), "adapter parameters")

	opt := optim.NewAdamW(lora.Parameters(), optim.AdamWConfig{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8})
	idx := tensor.FromInts([]int{1, 2, 3, 4, 5, 6, 7, 8}, 1, 8)
	model.Loss(idx, idx).Backward()
	opt.Step()

	dir, _ := os.MkdirTemp("", "adapter")
	defer os.RemoveAll(dir)
	if err := lora.SaveAdapter(dir); err != nil {
		panic(err)
	}
	_, err = nn.LoadAdapter(dir, nn.NewGPTWith(model.Config, tensor.NewGenerator(1)))
	fmt.Println("loaded:", err == nil)
	// Output:
	// [transformer.h.0.attn.c_attn transformer.h.1.attn.c_attn]
	// 512 adapter parameters
	// loaded: true
}
