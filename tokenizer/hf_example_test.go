package tokenizer_test

import (
	"fmt"

	"github.com/wickml/wick/tokenizer"
)

// LoadTokenizerJSON reads a Hugging Face tokenizer.json (LoadPretrained
// finds it in a model directory). Encode gives the ids of the text alone;
// EncodeSpecial adds what the post-processor adds to a prompt, here
// Mistral's "<s>".
func ExampleLoadTokenizerJSON() {
	tok, err := tokenizer.LoadTokenizerJSON("../testdata/tokenizer/hf/mistral.json.gz")
	if err != nil {
		fmt.Println(err)
		return
	}
	ids := tok.Encode("Hello world, I'LL be back.</s>")
	fmt.Println(ids)
	fmt.Println(tok.EncodeSpecial("Hello world"))
	fmt.Printf("%q\n", tok.Decode(ids))
	fmt.Println(tok.VocabSize())
	// Output:
	// [22557 1526 28725 315 28742 5292 347 852 28723 2]
	// [1 22557 1526]
	// "Hello world, I'LL be back.</s>"
	// 32000
}
