// Command benchtok times the GPT-2 tokenizer (package tokenizer) on a text
// file: it loads the vocabulary (untimed), encodes the file once with an
// empty word cache ("cold", the case tiktoken, which has no cache, is
// compared with) and once more with the cache filled ("warm"), and prints
// one line:
//
//	wick cold_s=0.0421 warm_s=0.0160 ids=338025 bytes=1115394
//
// scripts/bench_tokenizer.sh runs it beside tiktoken's core
// (scripts/bench_tokenizer.js).
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/wickml/wick/tokenizer"
)

func main() {
	path := flag.String("data", "data/shakespeare_char/input.txt", "text file to encode (the default is tiny Shakespeare, shipped in the repository)")
	vocab := flag.String("vocab", "", "directory of GPT-2's vocabulary files (empty: the vocabulary embedded in Wick, tokenizer.NewGPT2)")
	flag.Parse()
	if err := run(*path, *vocab); err != nil {
		fmt.Fprintln(os.Stderr, "benchtok:", err)
		os.Exit(1)
	}
}

func run(path, vocab string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	tok := tokenizer.NewGPT2()
	if vocab != "" {
		if tok, err = tokenizer.LoadGPT2(vocab); err != nil {
			return err
		}
	}
	text := string(b)
	t0 := time.Now()
	ids := tok.Encode(text)
	cold := time.Since(t0)
	t0 = time.Now()
	again := tok.Encode(text)
	warm := time.Since(t0)
	if len(again) != len(ids) {
		return fmt.Errorf("the second encoding has %d ids, the first %d", len(again), len(ids))
	}
	fmt.Printf("wick cold_s=%.4f warm_s=%.4f ids=%d bytes=%d\n", cold.Seconds(), warm.Seconds(), len(ids), len(b))
	return nil
}
