package tokenizer_test

import (
	"fmt"

	"github.com/wickml/wick/tokenizer"
)

// LoadGPT2 reads OpenAI's encoder.json and vocab.bpe (or Hugging Face's
// vocab.json and merges.txt) from a directory; this one is beside the
// repository.
func ExampleLoadGPT2() {
	tok, err := tokenizer.LoadGPT2("../../shared/data/gpt2")
	if err != nil {
		fmt.Println(err)
		return
	}
	ids := tok.Encode("Hello world, I'LL be back.<|endoftext|>")
	fmt.Println(ids)
	fmt.Printf("%q\n", tok.Decode(ids[:3]))
	fmt.Println(tok.VocabSize())
	// Output:
	// [15496 995 11 314 6 3069 307 736 13 50256]
	// "Hello world,"
	// 50257
}
