package tokenizer_test

import (
	"fmt"
	"log"

	"github.com/wickml/wick/tokenizer"
)

// NewGPT2 returns GPT-2's tokenizer, tiktoken's "gpt2" encoding, from the
// vocabulary embedded in Wick: no files needed. (LoadGPT2 reads the same
// vocabulary from OpenAI's encoder.json and vocab.bpe or Hugging Face's
// vocab.json and merges.txt in a directory.)
func ExampleNewGPT2() {
	tok := tokenizer.NewGPT2()
	ids := tok.Encode("Hello world, I'LL be back.<|endoftext|>")
	fmt.Println(ids)
	fmt.Printf("%q\n", tok.Decode(ids[:3]))
	fmt.Println(tok.VocabSize())
	// Output:
	// [15496 995 11 314 6 3069 307 736 13 50256]
	// "Hello world,"
	// 50257
}

// A character tokenizer has one id per distinct character of its text;
// EncodeStrict names a character it lacks, where Encode leaves it out.
func ExampleNewChar() {
	tok := tokenizer.NewChar([]byte("hello world"))
	ids := tok.Encode("hello")
	fmt.Println(tok.VocabSize(), ids, tok.Decode(ids))
	_, err := tok.EncodeStrict("hello!")
	fmt.Println(err)
	fmt.Println(tok.Encode("hello!"))
	// Output:
	// 8 [3 2 4 4 5] hello
	// character '!' is not in the tokenizer's vocabulary
	// [3 2 4 4 5]
}

// TrainBPE learns merges of frequent byte pairs; any text encodes, and the
// tokenizer saves to JSON and loads back with Unmarshal.
func ExampleTrainBPE() {
	text := []byte("the cat sat on the mat; the cat ate the rat")
	tok, err := tokenizer.TrainBPE(text, 260)
	if err != nil {
		fmt.Println(err)
		return
	}
	ids := tok.Encode("the bat")
	fmt.Println(tok.VocabSize(), len(ids), tok.Decode(ids))
	js, _ := tok.MarshalJSON()
	back, _ := tokenizer.Unmarshal(js)
	fmt.Println(back.Kind(), back.Decode(ids))
	// Output:
	// 260 4 the bat
	// bpe the bat
}

// The tokenizers side by side: the character tokenizer knows only the
// characters of its text, a trained byte-level BPE encodes any text.
func ExampleEncodeStrict() {
	text := []byte("To be, or not to be, that is the question")
	char := tokenizer.NewChar(text)           // one id per distinct character of text
	bpe, err := tokenizer.TrainBPE(text, 270) // 256 byte ids + 14 merges learned from text
	if err != nil {
		log.Fatal(err)
	}
	ids := bpe.Encode("To be, or not to be ☃") // any text encodes
	fmt.Println(len(ids), bpe.Decode(ids))
	_, err = tokenizer.EncodeStrict(char, "To be ☃")
	fmt.Println(err)
	// Output:
	// 18 To be, or not to be ☃
	// character '☃' is not in the tokenizer's vocabulary
}
