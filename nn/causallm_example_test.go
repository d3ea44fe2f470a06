package nn_test

import (
	"fmt"
	"log"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
	"github.com/wickml/wick/tokenizer"
)

// Load any supported family from the Hugging Face hub cache with its own
// tokenizer and continue a prompt greedily (compiled, not run: the test
// machine has no hub cache; ExampleLoadCausalLM runs on a committed model).
func ExampleLoadCausalLM_hub() {
	dir, err := nn.PretrainedDir("HuggingFaceTB/SmolLM2-135M")
	if err != nil {
		log.Fatal(err)
	}
	model, err := nn.LoadCausalLM(dir) // gpt2, llama, mistral, qwen2 or qwen3, from config.json's model_type
	if err != nil {
		log.Fatal(err)
	}
	tok, err := tokenizer.LoadPretrained(dir) // tokenizer.json, else vocab.json + merges.txt
	if err != nil {
		log.Fatal(err)
	}
	model.Eval()
	ids := tokenizer.EncodeSpecial(tok, "The meaning of life is") // as Hugging Face's tokenizer(prompt)
	out, err := nn.Generate(model, tensor.FromInts(ids, 1, len(ids)), nn.GenerateOptions{MaxNewTokens: 30, Temperature: 0})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(tok.Decode(out.Ints()))
}
