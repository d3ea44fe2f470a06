package serve_test

import (
	"context"
	"fmt"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/serve"
	"github.com/wickml/wick/tensor"
)

// An engine serves many requests at once; each gets its tokens on its own
// channel, then one final event that says why it ended.
func ExampleEngine() {
	m := nn.NewGPTWith(nn.GPTConfig{VocabSize: 50, BlockSize: 32, NLayer: 2, NHead: 2, NEmbd: 16}, tensor.NewGenerator(1))
	m.Eval()
	e, err := serve.NewEngine(serve.Config{Model: m, MaxBatch: 8})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer e.Close()
	var answers []<-chan serve.Event
	for i := range 3 {
		ch, err := e.Submit(context.Background(), serve.Request{Prompt: []int{1, 2, 3}, MaxTokens: 4 + i, Temperature: 0.8, Seed: uint64(i)})
		if err != nil {
			fmt.Println(err)
			return
		}
		answers = append(answers, ch)
	}
	for i, ch := range answers {
		n := 0
		for ev := range ch {
			if ev.Finish != "" {
				fmt.Printf("request %d: %d tokens, finish %s\n", i, n, ev.Finish)
				continue
			}
			n++
		}
	}
	// Output:
	// request 0: 4 tokens, finish length
	// request 1: 5 tokens, finish length
	// request 2: 6 tokens, finish length
}
