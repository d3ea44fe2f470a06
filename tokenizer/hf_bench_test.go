package tokenizer_test

import (
	"os"
	"testing"

	"github.com/wickml/wick/tokenizer"
)

// BenchmarkHFEncodeShakespeare encodes all of tiny Shakespeare as one
// string with the Llama 3 and Qwen3 tokenizers: "warm" with the word cache
// filled by earlier iterations, "cold" from an empty cache every time.
// scripts/bench_tokenizer_json.sh runs it beside Hugging Face tokenizers.
func BenchmarkHFEncodeShakespeare(b *testing.B) {
	text, err := os.ReadFile("../data/shakespeare_char/input.txt")
	if err != nil {
		b.Fatal(err)
	}
	s := string(text)
	for _, name := range []string{"llama3", "qwen3", "mistral"} {
		tok, err := tokenizer.ParseTokenizerJSON(hfBase(b, name))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name+"/warm", func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			n := len(tok.Encode(s))
			b.ResetTimer()
			for range b.N {
				if len(tok.Encode(s)) != n {
					b.Fatal("ids differ between runs")
				}
			}
			b.ReportMetric(float64(n), "ids")
		})
		b.Run(name+"/cold", func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for range b.N {
				b.StopTimer()
				c := tokenizer.NewHFCold(tok)
				b.StartTimer()
				c.Encode(s)
			}
		})
	}
}

// BenchmarkHFSplitLlama3 cuts tiny Shakespeare by Llama 3's split pattern
// alone (the hand-written matcher), for comparison with a regular
// expression engine that has lookahead.
func BenchmarkHFSplitLlama3(b *testing.B) {
	text, err := os.ReadFile("../data/shakespeare_char/input.txt")
	if err != nil {
		b.Fatal(err)
	}
	s := string(text)
	b.SetBytes(int64(len(s)))
	n := 0
	for range b.N {
		n = 0
		for i := 0; i < len(s); n++ {
			i += tokenizer.Cl100kPieceLen(s[i:], 3)
		}
	}
	b.ReportMetric(float64(n), "pieces")
}

// BenchmarkHFLoad reads each shipped tokenizer.json (uncompressed).
func BenchmarkHFLoad(b *testing.B) {
	for _, name := range []string{"llama3", "qwen3", "mistral"} {
		raw := hfBase(b, name)
		b.Run(name, func(b *testing.B) {
			for range b.N {
				if _, err := tokenizer.ParseTokenizerJSON(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
