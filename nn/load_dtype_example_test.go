package nn_test

import (
	"fmt"
	"path/filepath"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
)

// Loading a BF16 checkpoint with its weights kept in bfloat16: half the
// bytes of float32, while the logits are still float32.
func ExampleLoadCausalLMWith() {
	dir := filepath.Join("..", "testdata", "llama", "llama3_mqa_bf16")
	m, err := nn.LoadCausalLMWith(dir, nn.LoadOptions{DType: tensor.BFloat16})
	if err != nil {
		panic(err)
	}
	m.Eval()
	logits := m.Forward(tensor.FromInts([]int{1, 2, 3}, 1, 3))
	fmt.Println(m.NamedParameters()[0].Param.DType(), nn.ParameterBytes(m) == 2*int64(nn.ParameterCount(m)), logits.DType())
	// Output: bfloat16 true float32
}

// Converting a model built or loaded in float32 to bfloat16 weights for
// inference.
func ExampleToDType() {
	g := nn.NewGPTWith(nn.GPTConfig{VocabSize: 16, BlockSize: 8, NLayer: 1, NHead: 2, NEmbd: 8}, tensor.NewGenerator(1))
	fmt.Println(nn.ParameterBytes(g))
	nn.ToDType(g, tensor.BFloat16)
	fmt.Println(nn.ParameterBytes(g), g.LmHead.Weight == g.Wte.Weight)
	// Output:
	// 3936
	// 1968 true
}
