package nn_test

import (
	"context"
	"fmt"
	"log"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
)

// Load a model of any supported family from a Hugging Face directory (here
// the small random Qwen3 of the tests, written by
// scripts/gen_golden_llama.py) and continue a prompt greedily: 12 new
// tokens, then until token 7 (the config's EOS tokens stop it too).
func ExampleLoadCausalLM() {
	model, err := nn.LoadCausalLM("../testdata/llama/qwen3")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(model.ModelType(), model.VocabSize(), model.EOSTokenIDs())
	model.Eval()
	prompt := tensor.FromInts([]int{44, 15, 53, 0, 67}, 1, 5)
	out, err := nn.Generate(model, prompt, nn.GenerateOptions{MaxNewTokens: 12})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out.Ints())
	out, _ = nn.Generate(model, prompt, nn.GenerateOptions{MaxNewTokens: 12, StopTokenIDs: []int{7}})
	fmt.Println(out.Ints())
	// Output:
	// qwen3 96 [4]
	// [44 15 53 0 67 46 17 46 7 46 7 46 7 7 7 7 7]
	// [44 15 53 0 67 46 17 46 7]
}

// Sample with a temperature, top-k and top-p from a generator of one's
// own, so the tokens are reproducible whatever else draws random numbers.
func ExampleGenerate() {
	cfg := nn.LlamaConfig{ModelType: "llama", VocabSize: 50, HiddenSize: 16, IntermediateSize: 32, NumHiddenLayers: 2,
		NumAttentionHeads: 4, NumKeyValueHeads: 2, HeadDim: 4, MaxPositionEmbeddings: 64, RMSNormEps: 1e-5, RopeTheta: 10000}
	model := nn.NewLlamaWith(cfg, tensor.NewGenerator(1))
	opts := nn.GenerateOptions{MaxNewTokens: 6, Temperature: 0.8, TopK: 20, TopP: 0.95, Generator: tensor.NewGenerator(7)}
	a, _ := nn.Generate(model, tensor.FromInts([]int{1, 2}, 1, 2), opts)
	opts.Generator = tensor.NewGenerator(7)
	b, _ := nn.Generate(model, tensor.FromInts([]int{1, 2}, 1, 2), opts)
	fmt.Println(len(a.Ints()), fmt.Sprint(a.Ints()) == fmt.Sprint(b.Ints()))
	// Output:
	// 8 true
}

// GPT's generation methods and nn.Generate draw the same tokens: the
// methods run through it.
func ExampleGPT_GenerateContext() {
	model := nn.NewGPTWith(nn.GPTConfig{VocabSize: 20, BlockSize: 8, NLayer: 1, NHead: 2, NEmbd: 8}, tensor.NewGenerator(3))
	model.Eval()
	prompt := tensor.FromInts([]int{1, 2, 3}, 1, 3)
	a, err := model.GenerateContext(context.Background(), prompt, 10, 0.9, 5, tensor.NewGenerator(4))
	if err != nil {
		log.Fatal(err)
	}
	b := model.GenerateWith(prompt, 10, 0.9, 5, tensor.NewGenerator(4))
	c, _ := nn.Generate(model, prompt, nn.GenerateOptions{MaxNewTokens: 10, Temperature: 0.9, TopK: 5, Generator: tensor.NewGenerator(4)})
	fmt.Println(len(a.Ints()), fmt.Sprint(a.Ints()) == fmt.Sprint(b.Ints()), fmt.Sprint(b.Ints()) == fmt.Sprint(c.Ints()))
	// Output:
	// 13 true true
}
