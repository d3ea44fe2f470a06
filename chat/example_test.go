package chat_test

import (
	"fmt"
	"log"

	"github.com/wickml/wick/chat"
)

func Example() {
	cfg, err := chat.LoadConfig("../testdata/chat/qwen3")
	if err != nil {
		log.Fatal(err)
	}
	tmpl, err := cfg.Template("")
	if err != nil {
		log.Fatal(err)
	}
	prompt, err := tmpl.Render([]chat.Message{
		{Role: "system", Content: "You are a helpful assistant."},
		{Role: "user", Content: "Hello!"},
	}, chat.Options{AddGenerationPrompt: true, Vars: map[string]any{"enable_thinking": false}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(prompt)
	fmt.Printf("stop at %q (ids %v)\n", cfg.Stop, cfg.StopTokenIDs)
	// Output:
	// <|im_start|>system
	// You are a helpful assistant.<|im_end|>
	// <|im_start|>user
	// Hello!<|im_end|>
	// <|im_start|>assistant
	// <think>
	//
	// </think>
	//
	// stop at ["<|im_end|>"] (ids [151645])
}
