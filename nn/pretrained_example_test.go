package nn_test

import (
	"fmt"
	"log"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
	"github.com/wickml/wick/tokenizer"
)

// Continue a prompt with GPT-2 as Hugging Face stores it: "gpt2" is found
// in the hub cache (after `huggingface-cli download gpt2`; a directory
// path works too), and the tokenizer's vocab.json and merges.txt sit in
// the same snapshot directory.
func ExampleLoadPretrained() {
	dir, err := nn.PretrainedDir("gpt2")
	if err != nil {
		log.Fatal(err)
	}
	model, err := nn.LoadPretrained(dir)
	if err != nil {
		log.Fatal(err)
	}
	tok, err := tokenizer.LoadGPT2(dir)
	if err != nil {
		log.Fatal(err)
	}
	model.Eval()
	ids := tok.Encode("The meaning of life is")
	out := model.GenerateWith(tensor.FromInts(ids, 1, len(ids)), 30, 0.8, 200, tensor.NewGenerator(42))
	fmt.Println(tok.Decode(out.Ints()))
}

// Load the small random GPT-2 of the tests (written in the hub's layout by
// scripts/gen_golden_pretrained.py) and continue a prompt greedily.
func ExampleLoadPretrained_greedy() {
	model, err := nn.LoadPretrained("../testdata/pretrained/sharded")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%+v\n", model.Config)
	model.Eval()
	out := model.GenerateWith(tensor.FromInts([]int{1, 2, 3}, 1, 3), 8, 1, 1, nil)
	fmt.Println(out.Ints())
	// Output:
	// {VocabSize:97 BlockSize:32 NLayer:2 NHead:4 NEmbd:32 Dropout:0 Bias:true Activation:gelu_new}
	// [1 2 3 10 95 2 46 18 2 66 89]
}
