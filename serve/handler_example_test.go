package serve_test

import (
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/serve"
	"github.com/wickml/wick/tensor"
	"github.com/wickml/wick/tokenizer"
)

// A model behind OpenAI's API: an engine, the handler in front of it, and
// a completion request as any OpenAI client sends it.
func ExampleNewHandler() {
	tok := tokenizer.NewChar([]byte("abcdefghijklmnopqrstuvwxyz "))
	model := nn.NewGPTWith(nn.GPTConfig{VocabSize: tok.VocabSize(), BlockSize: 32, NLayer: 1, NHead: 2, NEmbd: 16}, tensor.NewGenerator(1))
	model.Eval()
	eng, err := serve.NewEngine(serve.Config{Model: model})
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()
	api := serve.NewHandler(eng, serve.HandlerOptions{ModelName: "tiny", Tokenizer: tok, ContextSize: model.ContextSize()})
	srv := httptest.NewServer(api) // or mount it: mux.Handle("/v1/", api)
	defer srv.Close()

	resp, err := http.Post(srv.URL+"/v1/completions", "application/json",
		strings.NewReader(`{"model": "tiny", "prompt": "hello", "max_tokens": 5, "temperature": 0}`))
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Object  string
		Choices []struct {
			Text         string
			FinishReason string `json:"finish_reason"`
		}
		Usage struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.StatusCode, out.Object, out.Choices[0].FinishReason)
	fmt.Println("tokens:", out.Usage.PromptTokens, "in,", out.Usage.CompletionTokens, "out; characters:", len(out.Choices[0].Text))
	// Output:
	// 200 text_completion length
	// tokens: 5 in, 5 out; characters: 5
}
