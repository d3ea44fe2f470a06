package serve

import (
	"encoding/json"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wickml/wick/chat"
)

// FuzzHandler sends arbitrary bodies to the generation endpoints: every
// answer is 200 (a JSON answer or a stream ending in [DONE]) or an OpenAI
// error object with a 4xx or 5xx status, and nothing panics.
func FuzzHandler(f *testing.F) {
	for _, b := range []string{
		`{"prompt": "hello", "max_tokens": 5}`,
		`{"prompt": ["ab", [1, 2]], "n": 2, "stream": true, "stop": ["l"]}`,
		`{"prompt": "a", "temperature": 1e-300}`,
		`{"prompt": "a", "echo": true, "stream": true, "stream_options": {"include_usage": true}}`,
		`{"messages": [{"role": "user", "content": "hi"}], "stream": true}`,
		`{"messages": [{"role": "user", "content": [{"type": "text", "text": "x"}]}], "chat_template_kwargs": {"a": 1}}`,
		`{"prompt": "`, `[]`, `null`, `{"prompt": 3}`, `{"max_tokens": -1}`, `{"prompt": "a", "top_p": 2}`,
	} {
		f.Add(false, b)
		f.Add(true, b)
	}
	tmpl, err := chat.Compile(testChat, "", "")
	if err != nil {
		f.Fatal(err)
	}
	h := NewHandler(&fakeGen{}, HandlerOptions{ModelName: "tiny", Tokenizer: testTok, ContextSize: 64, MaxTokens: 32,
		ChatTemplate: tmpl, Logger: log.New(io.Discard, "", 0)})
	f.Fuzz(func(t *testing.T, chatPath bool, body string) {
		path := "/v1/completions"
		if chatPath {
			path = "/v1/chat/completions"
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("POST", path, strings.NewReader(body)))
		out := rec.Body.String()
		switch {
		case rec.Code == 200 && strings.HasPrefix(out, "data: "):
			if !strings.HasSuffix(out, "data: [DONE]\n\n") {
				t.Errorf("%s: a stream without [DONE]: %q", body, out)
			}
		case rec.Code == 200:
			if !json.Valid([]byte(out)) {
				t.Errorf("%s: 200 with %q", body, out)
			}
		default:
			var e struct {
				Error *apiError `json:"error"`
			}
			if rec.Code < 400 || json.Unmarshal([]byte(out), &e) != nil || e.Error == nil || e.Error.Message == "" {
				t.Errorf("%s: %d %q, want an OpenAI error object", body, rec.Code, out)
			}
			if rec.Code == 500 {
				t.Errorf("%s: 500 %s", body, out)
			}
		}
	})
}
