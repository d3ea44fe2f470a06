package nn_test

import (
	"fmt"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/optim"
	"github.com/wickml/wick/tensor"
)

// Train a tiny GPT to continue a repeating sequence.
func ExampleGPT() {
	tensor.ManualSeed(1337)
	data := []int{0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7, 0}
	x := tensor.FromInts(data[:16], 1, 16) // inputs
	y := tensor.FromInts(data[1:], 1, 16)  // next tokens
	model := nn.NewGPT(nn.GPTConfig{VocabSize: 8, BlockSize: 16, NLayer: 1, NHead: 2, NEmbd: 16})
	opt := optim.NewAdamW(model.Parameters(), optim.AdamWConfig{LR: 1e-2})
	for step := range 100 {
		loss := model.Loss(x, y)
		if step == 0 {
			fmt.Printf("initial loss %.1f\n", loss.Item())
		}
		loss.Backward()
		opt.Step()
		opt.ZeroGrad()
	}
	fmt.Println("trained loss below 0.05:", model.Loss(x, y).Item() < 0.05)
	model.Eval()
	fmt.Println(model.Generate(tensor.FromInts(data[:4], 1, 4), 8, 1.0, 1).Ints())
	// Output:
	// initial loss 2.1
	// trained loss below 0.05: true
	// [0 1 2 3 4 5 6 7 0 1 2 3]
}

func ExampleGPT_String() {
	model := nn.NewGPT(nn.GPTConfig{VocabSize: 65, BlockSize: 16, NLayer: 1, NHead: 2, NEmbd: 8})
	fmt.Println(model)
	// Output:
	// GPT(  # 1,440 params
	//   (transformer): ModuleDict(  # 1,440 params
	//     (wte): Embedding(65, 8)  # 520 params
	//     (wpe): Embedding(16, 8)  # 128 params
	//     (drop): Dropout(p=0.0, inplace=False)
	//     (h): ModuleList(  # 784 params
	//       (0): Block(  # 784 params
	//         (ln_1): LayerNorm((8,), eps=1e-05, bias=False)  # 8 params
	//         (attn): CausalSelfAttention(  # 256 params
	//           (c_attn): Linear(in_features=8, out_features=24, bias=False)  # 192 params
	//           (c_proj): Linear(in_features=8, out_features=8, bias=False)  # 64 params
	//           (attn_dropout): Dropout(p=0.0, inplace=False)
	//           (resid_dropout): Dropout(p=0.0, inplace=False)
	//         )
	//         (ln_2): LayerNorm((8,), eps=1e-05, bias=False)  # 8 params
	//         (mlp): MLP(  # 512 params
	//           (c_fc): Linear(in_features=8, out_features=32, bias=False)  # 256 params
	//           (gelu): GELU(approximate='none')
	//           (c_proj): Linear(in_features=32, out_features=8, bias=False)  # 256 params
	//           (dropout): Dropout(p=0.0, inplace=False)
	//         )
	//       )
	//     )
	//     (ln_f): LayerNorm((8,), eps=1e-05, bias=False)  # 8 params
	//   )
	//   (lm_head): Linear(in_features=8, out_features=65, bias=False)  # tied to transformer.wte.weight
	// )
}
