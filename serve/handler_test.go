package serve

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wickml/wick/chat"
	"github.com/wickml/wick/tokenizer"
)

// syncBuffer is a bytes.Buffer that many goroutines may write.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// testChat is a small chat template in the test tokenizer's alphabet:
// each turn "role: content\n", then "assistant:".
const testChat = `{% for m in messages %}{{ m.role }}: {{ m.content }}
{% endfor %}{% if add_generation_prompt %}assistant:{% endif %}`

// fakeServer serves f on an httptest server with small bounds and the
// test chat template, and returns it with the handler and its log.
func fakeServer(t *testing.T, f *fakeGen, edit func(*HandlerOptions)) (*httptest.Server, *Handler, *syncBuffer) {
	t.Helper()
	tmpl, err := chat.Compile(testChat, "", "")
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	o := HandlerOptions{
		ModelName: "tiny", Tokenizer: testTok, ContextSize: 64, MaxTokens: 32, MaxBodyBytes: 4 << 10,
		ChatTemplate: tmpl, ChatStop: []string{"\nuser:"}, ChatStopTokenIDs: ids("\n"),
		Logger: log.New(logs, "", 0),
	}
	if edit != nil {
		edit(&o)
	}
	h := NewHandler(f, o)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, h, logs
}

// call sends a request and returns the status and body.
func call(t *testing.T, method, url, body string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	c := &http.Client{Timeout: 20 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// completion is the part of an answer the tests read.
type completion struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Index        int     `json:"index"`
		Text         string  `json:"text"`
		FinishReason *string `json:"finish_reason"`
		Message      *struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"message"`
		Delta *struct {
			Role    *string `json:"role"`
			Content *string `json:"content"`
		} `json:"delta"`
	} `json:"choices"`
	Usage *usage `json:"usage"`
}

func decode(t *testing.T, body string) completion {
	t.Helper()
	var c completion
	if err := json.Unmarshal([]byte(body), &c); err != nil {
		t.Fatalf("%v in %s", err, body)
	}
	return c
}

// events reads a server-sent event stream: the JSON of each "data:" line,
// and whether it ended with "data: [DONE]". Every event must be one
// "data: " line followed by a blank line.
func events(t *testing.T, body string) ([]string, bool) {
	t.Helper()
	var out []string
	done := false
	sc := bufio.NewScanner(strings.NewReader(body))
	expectBlank := false
	for sc.Scan() {
		line := sc.Text()
		if expectBlank {
			if line != "" {
				t.Fatalf("event not followed by a blank line: %q in\n%s", line, body)
			}
			expectBlank = false
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || done {
			t.Fatalf("line %q in the stream (after [DONE]: %v):\n%s", line, done, body)
		}
		if data == "[DONE]" {
			done = true
		} else {
			out = append(out, data)
		}
		expectBlank = true
	}
	return out, done
}

func TestModels(t *testing.T) {
	srv, _, _ := fakeServer(t, &fakeGen{}, nil)
	code, body := call(t, "GET", srv.URL+"/v1/models", "")
	var list struct {
		Object string `json:"object"`
		Data   []struct {
			ID, Object, OwnedBy string
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &list); err != nil || code != 200 || list.Object != "list" || len(list.Data) != 1 || list.Data[0].ID != "tiny" || list.Data[0].Object != "model" {
		t.Errorf("/v1/models: %d %s (%v)", code, body, err)
	}
	if code, body := call(t, "GET", srv.URL+"/v1/models/tiny", ""); code != 200 || !strings.Contains(body, `"id":"tiny"`) {
		t.Errorf("/v1/models/tiny: %d %s", code, body)
	}
	if code, body := call(t, "GET", srv.URL+"/v1/models/gpt-4", ""); code != 404 || !strings.Contains(body, "model_not_found") {
		t.Errorf("/v1/models/gpt-4: %d %s", code, body)
	}
	if code, body := call(t, "GET", srv.URL+"/health", ""); code != 200 || !strings.Contains(body, "ok") {
		t.Errorf("/health: %d %s", code, body)
	}
}

func TestCompletionWhole(t *testing.T) {
	f := &fakeGen{}
	srv, _, _ := fakeServer(t, f, nil)
	code, body := call(t, "POST", srv.URL+"/v1/completions", `{"model": "tiny", "prompt": "say: ", "max_tokens": 5, "temperature": 0.5, "top_p": 0.9, "top_k": 7, "seed": 42}`)
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	c := decode(t, body)
	if c.Object != "text_completion" || !strings.HasPrefix(c.ID, "cmpl-") || c.Model != "tiny" || len(c.Choices) != 1 {
		t.Fatalf("answer %s", body)
	}
	if ch := c.Choices[0]; ch.Text != "hello" || ch.FinishReason == nil || *ch.FinishReason != "length" {
		t.Errorf("choice %+v, want hello and length", ch)
	}
	if u := c.Usage; u == nil || *u != (usage{PromptTokens: 5, CompletionTokens: 5, TotalTokens: 10}) {
		t.Errorf("usage %+v, want 5 + 5", u)
	}
	reqs := f.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests submitted", len(reqs))
	}
	r := reqs[0]
	if !slices.Equal(r.Prompt, ids("say: ")) || r.MaxTokens != 5 || r.Temperature != 0.5 || r.TopP != 0.9 || r.TopK != 7 || r.Seed != 42 {
		t.Errorf("submitted %+v", r)
	}
	// defaults: OpenAI's max_tokens of 16, temperature 1; temperature 0
	// is greedy; token-id prompts; a list of prompts is a choice each
	call(t, "POST", srv.URL+"/v1/completions", `{"prompt": "a", "temperature": 0}`)
	code, body = call(t, "POST", srv.URL+"/v1/completions", `{"prompt": [[1, 2], "ab"], "max_tokens": 3, "echo": true, "seed": 9, "top_k": -1}`)
	c = decode(t, body)
	if code != 200 || len(c.Choices) != 2 || c.Choices[0].Text != testTok.Decode([]int{1, 2})+"hel" || c.Choices[1].Text != "abhel" || c.Usage.PromptTokens != 4 || c.Usage.CompletionTokens != 6 {
		t.Errorf("two prompts with echo: %d %s", code, body)
	}
	reqs = f.requests()[1:]
	if reqs[0].MaxTokens != 16 || reqs[0].Temperature != 0 || reqs[1].Seed != 9 || reqs[2].Seed != 10 || reqs[2].TopK != 0 || !slices.Equal(reqs[1].Prompt, []int{1, 2}) {
		t.Errorf("submitted %+v", reqs)
	}
}

func TestCompletionStream(t *testing.T) {
	f := &fakeGen{finish: FinishStop}
	srv, _, _ := fakeServer(t, f, nil)
	var whole string
	for _, stream := range []bool{false, true} {
		body := `{"prompt": "x", "max_tokens": 20, "seed": 1, "stream": ` + map[bool]string{false: "false", true: `true, "stream_options": {"include_usage": true}`}[stream] + `}`
		code, out := call(t, "POST", srv.URL+"/v1/completions", body)
		if code != 200 {
			t.Fatalf("%d %s", code, out)
		}
		if !stream {
			whole = decode(t, out).Choices[0].Text
			continue
		}
		evs, done := events(t, out)
		if !done || len(evs) < 3 {
			t.Fatalf("stream without [DONE] or too short:\n%s", out)
		}
		text, finishes := "", 0
		for i, e := range evs[:len(evs)-1] {
			c := decode(t, e)
			if c.Object != "text_completion" || len(c.Choices) != 1 || c.Usage != nil {
				t.Errorf("chunk %d: %s", i, e)
			}
			text += c.Choices[0].Text
			if fr := c.Choices[0].FinishReason; fr != nil {
				finishes++
				if *fr != "stop" || i != len(evs)-2 {
					t.Errorf("finish %q in chunk %d of %d", *fr, i, len(evs))
				}
			}
		}
		last := decode(t, evs[len(evs)-1])
		if finishes != 1 || text != whole || text != "hello world" {
			t.Errorf("streamed %q with %d finishes; whole %q", text, finishes, whole)
		}
		if last.Usage == nil || len(last.Choices) != 0 || last.Usage.CompletionTokens != 11 || last.Usage.PromptTokens != 1 {
			t.Errorf("last chunk %s: want the usage and no choices", evs[len(evs)-1])
		}
	}
}

// byteTok is a tokenizer of single bytes: a character of two bytes is
// two tokens, the first of which decodes to no complete character.
type byteTok struct{ tokenizer.Tokenizer }

func (byteTok) Encode(s string) []int {
	out := make([]int, len(s))
	for i := range len(s) {
		out[i] = int(s[i])
	}
	return out
}

func (byteTok) Decode(ids []int) string {
	b := make([]byte, len(ids))
	for i, id := range ids {
		b[i] = byte(id)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

func (byteTok) VocabSize() int { return 256 }

// TestContinuousUsage: with stream_options.continuous_usage_stats (and
// include_usage) every token gets a chunk, its text empty where it ends
// inside a character, and every chunk carries its choice's usage so far;
// the text streamed is the whole answer's. Without it, a token that
// completes no character sends nothing.
func TestContinuousUsage(t *testing.T) {
	answer := "h\u00e9 \u00e9t\u00e9" // "hé été": 6 characters, 9 bytes
	f := &fakeGen{script: func(Request) []int { return byteTok{}.Encode(answer) }}
	srv, _, _ := fakeServer(t, f, func(o *HandlerOptions) { o.Tokenizer = byteTok{testTok}; o.ChatStopTokenIDs = nil })
	for _, path := range []string{"/v1/completions", "/v1/chat/completions"} {
		req := `"prompt": "ab"`
		if path == "/v1/chat/completions" {
			req = `"messages": [{"role": "user", "content": "ab"}]`
		}
		_, wholeOut := call(t, "POST", srv.URL+path, `{`+req+`, "max_tokens": 20}`)
		whole := decode(t, wholeOut)
		prompt := whole.Usage.PromptTokens
		for _, continuous := range []bool{false, true} {
			body := fmt.Sprintf(`{%s, "max_tokens": 20, "stream": true, "stream_options": {"include_usage": true, "continuous_usage_stats": %v}}`, req, continuous)
			code, out := call(t, "POST", srv.URL+path, body)
			evs, done := events(t, out)
			if code != 200 || !done {
				t.Fatalf("%s: %d %s", path, code, out)
			}
			text, texts, last := "", 0, -1
			for i, e := range evs[:len(evs)-1] {
				c := decode(t, e)
				ch := c.Choices[0]
				piece := ch.Text
				if ch.Delta != nil {
					piece = ""
					if ch.Delta.Content != nil {
						piece = *ch.Delta.Content
					}
					if ch.Delta.Role != nil {
						piece = "role"
					}
				}
				if piece != "role" && ch.FinishReason == nil {
					text += piece
					texts++
				}
				if !continuous {
					if c.Usage != nil || (piece == "" && ch.FinishReason == nil) {
						t.Errorf("%s chunk %d without continuous_usage_stats: %s", path, i, e)
					}
					continue
				}
				if c.Usage == nil || c.Usage.PromptTokens != prompt || c.Usage.TotalTokens != prompt+c.Usage.CompletionTokens {
					t.Fatalf("%s chunk %d: usage %+v, want prompt %d", path, i, c.Usage, prompt)
				}
				n := c.Usage.CompletionTokens
				switch {
				case piece == "role" && n != 0:
					t.Errorf("%s: the role chunk counts %d tokens", path, n)
				case piece != "role" && ch.FinishReason == nil && n != last+1 && last >= 0:
					t.Errorf("%s chunk %d: %d tokens after %d", path, i, n, last)
				}
				if piece != "role" {
					last = n
				}
			}
			final := decode(t, evs[len(evs)-1])
			if text != answer || final.Usage == nil || final.Usage.CompletionTokens != 9 {
				t.Errorf("%s continuous %v: streamed %q, last %s", path, continuous, text, evs[len(evs)-1])
			}
			want := 6 // a chunk per complete character
			if continuous {
				want = 9 // a chunk per token
			}
			if texts != want || (continuous && last != 9) {
				t.Errorf("%s continuous %v: %d text chunks (want %d), last count %d", path, continuous, texts, want, last)
			}
		}
	}
}

// TestStopStrings: a stop string ends the text before it, cancels the
// request, and no part of it is streamed, even when it spans tokens.
func TestStopStrings(t *testing.T) {
	f := &fakeGen{script: func(Request) []int { return ids("hello world, hello moon") }}
	srv, _, _ := fakeServer(t, f, nil)
	for _, c := range []struct{ stop, want string }{
		{`"wor"`, "hello "}, {`["moon", ", h"]`, "hello world"}, {`["xyz"]`, "hello world, hello moon"}, {`"o"`, "hell"},
	} {
		for _, stream := range []string{"false", "true"} {
			code, out := call(t, "POST", srv.URL+"/v1/completions", `{"prompt": "a", "max_tokens": 30, "stop": `+c.stop+`, "stream": `+stream+`}`)
			if code != 200 {
				t.Fatalf("%d %s", code, out)
			}
			text, finish := "", ""
			if stream == "false" {
				ch := decode(t, out).Choices[0]
				text, finish = ch.Text, *ch.FinishReason
			} else {
				evs, _ := events(t, out)
				for _, e := range evs {
					ch := decode(t, e).Choices[0]
					text += ch.Text
					if ch.FinishReason != nil {
						finish = *ch.FinishReason
					}
				}
			}
			wantFinish := "stop"
			if c.stop == `["xyz"]` {
				wantFinish = "length"
			}
			if text != c.want || finish != wantFinish {
				t.Errorf("stop %s stream %s: %q %s, want %q %s", c.stop, stream, text, finish, c.want, wantFinish)
			}
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cancels < 6 {
		t.Errorf("%d requests cancelled at a stop string, want 6", f.cancels)
	}
}

func TestChat(t *testing.T) {
	f := &fakeGen{script: func(Request) []int { return ids("fine, thanks\nuser: more") }}
	srv, _, _ := fakeServer(t, f, func(o *HandlerOptions) { o.EOSTokenIDs = []int{0}; o.ChatStopTokenIDs = nil })
	msgs := `"messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": [{"type": "text", "text": "how are you?"}]}]`
	code, out := call(t, "POST", srv.URL+"/v1/chat/completions", `{"model": "tiny", `+msgs+`, "max_completion_tokens": 15}`)
	if code != 200 {
		t.Fatalf("%d %s", code, out)
	}
	c := decode(t, out)
	if c.Object != "chat.completion" || !strings.HasPrefix(c.ID, "chatcmpl-") || c.Choices[0].Message == nil ||
		c.Choices[0].Message.Role != "assistant" || c.Choices[0].Message.Content != "fine, thanks" || *c.Choices[0].FinishReason != "stop" {
		t.Errorf("chat answer %s", out)
	}
	r := f.requests()[0]
	if want := ids("system: be brief\nuser: how are you?\nassistant:"); !slices.Equal(r.Prompt, want) || c.Usage.PromptTokens != len(want) {
		t.Errorf("prompt %q, want the template's rendering", testTok.Decode(r.Prompt))
	}
	if !slices.Equal(r.StopIDs, []int{0}) || r.MaxTokens != 15 {
		t.Errorf("stop ids %v, max %d", r.StopIDs, r.MaxTokens)
	}
	// streamed: the role first, then the content, then the finish
	code, out = call(t, "POST", srv.URL+"/v1/chat/completions", `{`+msgs+`, "stream": true}`)
	evs, done := events(t, out)
	if code != 200 || !done || len(evs) < 3 {
		t.Fatalf("%d %s", code, out)
	}
	text := ""
	for i, e := range evs {
		ch := decode(t, e)
		if ch.Object != "chat.completion.chunk" || ch.Choices[0].Delta == nil {
			t.Fatalf("chunk %s", e)
		}
		d := ch.Choices[0].Delta
		if (i == 0) != (d.Role != nil) || (i == 0 && *d.Role != "assistant") {
			t.Errorf("chunk %d: %s (the role comes first, once)", i, e)
		}
		if d.Content != nil {
			text += *d.Content
		}
		if fr := ch.Choices[0].FinishReason; (fr != nil) != (i == len(evs)-1) || fr != nil && (*fr != "stop" || d.Content != nil) {
			t.Errorf("chunk %d of %d: %s", i, len(evs), e)
		}
	}
	if text != "fine, thanks" {
		t.Errorf("streamed %q", text)
	}
	// chat_template_kwargs reach the template
	srv3, _, _ := fakeServer(t, f, func(o *HandlerOptions) {
		o.ChatTemplate, _ = chat.Compile(`{% if shout %}loud{% else %}quiet{% endif %}:`, "", "")
	})
	n := len(f.requests())
	call(t, "POST", srv3.URL+"/v1/chat/completions", `{`+msgs+`, "chat_template_kwargs": {"shout": true}}`)
	call(t, "POST", srv3.URL+"/v1/chat/completions", `{`+msgs+`}`)
	if reqs := f.requests()[n:]; len(reqs) != 2 || testTok.Decode(reqs[0].Prompt) != "loud:" || testTok.Decode(reqs[1].Prompt) != "quiet:" {
		t.Errorf("chat_template_kwargs: prompts %v", reqs)
	}
	if code, out := call(t, "POST", srv3.URL+"/v1/chat/completions", `{`+msgs+`, "chat_template_kwargs": {"messages": []}}`); code != 400 {
		t.Errorf("chat_template_kwargs setting messages: %d %s", code, out)
	}
	// no template: 400 saying so
	srv2, _, _ := fakeServer(t, f, func(o *HandlerOptions) { o.ChatTemplate = nil })
	if code, out := call(t, "POST", srv2.URL+"/v1/chat/completions", `{`+msgs+`}`); code != 400 || !strings.Contains(out, "no chat template") {
		t.Errorf("no template: %d %s", code, out)
	}
}

// TestErrors: every error path answers its status and OpenAI's error
// object, and the server answers normally afterwards.
func TestErrors(t *testing.T) {
	type errCase struct {
		name, method, path, body string
		header                   []string
		gen                      *fakeGen
		edit                     func(*HandlerOptions)
		code                     int
		want                     string // in the message
		param                    string
	}
	big := `{"prompt": "` + strings.Repeat("a", 5000) + `"}`
	cases := []errCase{
		{name: "bad JSON", body: `{"prompt": `, code: 400, want: "not valid JSON"},
		{name: "empty body", body: ``, code: 400, want: "empty"},
		{name: "not an object", body: `[1]`, code: 400, want: "want an object"},
		{name: "trailing data", body: `{"prompt": "a"} {}`, code: 400, want: "after its JSON object"},
		{name: "unknown field", body: `{"prompt": "a", "temprature": 1}`, code: 400, want: `unknown field "temprature"`, param: "temprature"},
		{name: "wrong type", body: `{"prompt": "a", "max_tokens": "5"}`, code: 400, want: "max_tokens: want an integer", param: "max_tokens"},
		{name: "wrong type bool", body: `{"prompt": "a", "stream": 1}`, code: 400, want: "stream: want a boolean", param: "stream"},
		{name: "huge number", body: `{"prompt": "a", "temperature": 1e400}`, code: 400, want: "temperature"},
		{name: "temperature 1e-300", body: `{"prompt": "a", "temperature": 1e-300}`, code: 400, want: "temperature=1e-300 is below the smallest temperature", param: "temperature"},
		{name: "temperature 1e-45", body: `{"prompt": "a", "temperature": 1e-45}`, code: 400, want: "use 0 for greedy", param: "temperature"},
		{name: "temperature negative", body: `{"prompt": "a", "temperature": -1}`, code: 400, want: "temperature", param: "temperature"},
		{name: "top_p 0", body: `{"prompt": "a", "top_p": 0}`, code: 400, want: "top_p=0", param: "top_p"},
		{name: "top_k", body: `{"prompt": "a", "top_k": -2}`, code: 400, want: "top_k=-2", param: "top_k"},
		{name: "max_tokens cap", body: `{"prompt": "a", "max_tokens": 33}`, code: 400, want: "max_tokens=33: want 1 to 32", param: "max_tokens"},
		{name: "max_tokens 0", body: `{"prompt": "a", "max_tokens": 0}`, code: 400, want: "max_tokens=0", param: "max_tokens"},
		{name: "prompt over context", body: `{"prompt": "` + strings.Repeat("ab", 32) + `"}`, code: 400, want: "the model's context of 64 tokens", param: "prompt"},
		{name: "prompt and max over context", body: `{"prompt": "` + strings.Repeat("ab", 20) + `", "max_tokens": 30}`, code: 400, want: "40 tokens and max_tokens=30 are more than the model's context of 64", param: "max_tokens"},
		{name: "prompt outside the vocabulary", body: `{"prompt": "ABC"}`, code: 400, want: "prompt", param: "prompt"},
		{name: "token id out of range", body: `{"prompt": [1, 99]}`, code: 400, want: "token id 99", param: "prompt"},
		{name: "empty prompt", body: `{"prompt": ""}`, code: 400, want: "no tokens", param: "prompt"},
		{name: "no prompt", body: `{"max_tokens": 3}`, code: 400, want: "prompt is missing", param: "prompt"},
		{name: "n 0", body: `{"prompt": "a", "n": 0}`, code: 400, want: "n=0", param: "n"},
		{name: "n too many", body: `{"prompt": "a", "n": 17}`, code: 400, want: "n=17: want 1 to 16", param: "n"},
		{name: "choices too many", body: `{"prompt": ["a", "b", "c"], "n": 6}`, code: 400, want: "choices", param: "prompt"},
		{name: "stop too many", body: `{"prompt": "a", "stop": ["a", "b", "c", "d", "e"]}`, code: 400, want: "at most 4", param: "stop"},
		{name: "stop empty", body: `{"prompt": "a", "stop": ""}`, code: 400, want: "1 to 1000 bytes", param: "stop"},
		{name: "stop type", body: `{"prompt": "a", "stop": 3}`, code: 400, want: "want a string or a list", param: "stop"},
		{name: "logprobs", body: `{"prompt": "a", "logprobs": 2}`, code: 400, want: "not supported", param: "logprobs"},
		{name: "penalty", body: `{"prompt": "a", "frequency_penalty": 0.5}`, code: 400, want: "not supported", param: "frequency_penalty"},
		{name: "logit_bias", body: `{"prompt": "a", "logit_bias": {"1": 5}}`, code: 400, want: "not supported", param: "logit_bias"},
		{name: "stream_options without stream", body: `{"prompt": "a", "stream_options": {"include_usage": true}}`, code: 400, want: "stream=true", param: "stream_options"},
		{name: "unknown model", body: `{"model": "gpt-4", "prompt": "a"}`, code: 404, want: `"gpt-4" does not exist`, param: "model"},
		{name: "body over the limit", body: big, code: 413, want: "larger than 4096 bytes"},
		{name: "no API key", body: `{"prompt": "a"}`, edit: func(o *HandlerOptions) { o.APIKey = "sk-test" }, code: 401, want: "API key"},
		{name: "wrong API key", body: `{"prompt": "a"}`, header: []string{"Authorization", "Bearer sk-other"}, edit: func(o *HandlerOptions) { o.APIKey = "sk-test" }, code: 401, want: "API key"},
		{name: "models needs the key", method: "GET", path: "/v1/models", edit: func(o *HandlerOptions) { o.APIKey = "sk-test" }, code: 401, want: "API key"},
		{name: "engine full", body: `{"prompt": "a"}`, gen: &fakeGen{submit: ErrFull}, code: 429, want: "full"},
		{name: "engine closed", body: `{"prompt": "a"}`, gen: &fakeGen{submit: ErrClosed}, code: 503, want: "shutting down"},
		{name: "engine refuses", body: `{"prompt": "a"}`, gen: &fakeGen{submit: &RequestError{Field: "max_tokens", Msg: "the KV cache cannot hold it"}}, code: 400, want: "KV cache", param: "max_tokens"},
		{name: "NaN logits", body: `{"prompt": "a"}`, gen: &fakeGen{failErr: errNaN}, code: 500, want: "not finite"},
		{name: "NaN logits streamed", body: `{"prompt": "a", "stream": true}`, gen: &fakeGen{failErr: errNaN}, code: 500, want: "not finite"},
		{name: "panic", body: `{"prompt": "a"}`, gen: &fakeGen{panicked: true}, code: 500, want: "internal error: fake engine: boom"},
		{name: "unknown path", method: "GET", path: "/v1/embeddings", code: 404, want: "no such endpoint"},
		{name: "wrong method", method: "GET", path: "/v1/completions", code: 405, want: "use POST"},
		{name: "chat no messages", path: "/v1/chat/completions", body: `{"messages": []}`, code: 400, want: "messages is empty", param: "messages"},
		{name: "chat bad role", path: "/v1/chat/completions", body: `{"messages": [{"role": "tool", "content": "x"}]}`, code: 400, want: "role", param: "messages[0].role"},
		{name: "chat image", path: "/v1/chat/completions", body: `{"messages": [{"role": "user", "content": [{"type": "image_url"}]}]}`, code: 400, want: "not supported", param: "messages[0].content"},
		{name: "chat tools", path: "/v1/chat/completions", body: `{"messages": [{"role": "user", "content": "a"}], "tools": [{"type": "function"}]}`, code: 400, want: "tool calling", param: "tools"},
		{name: "chat logprobs", path: "/v1/chat/completions", body: `{"messages": [{"role": "user", "content": "a"}], "logprobs": true}`, code: 400, want: "not supported", param: "logprobs"},
		{name: "chat max_completion_tokens", path: "/v1/chat/completions", body: `{"messages": [{"role": "user", "content": "a"}], "max_completion_tokens": 40}`, code: 400, want: "max_completion_tokens=40", param: "max_completion_tokens"},
		{name: "chat outside the vocabulary", path: "/v1/chat/completions", body: `{"messages": [{"role": "user", "content": "ÀÉ"}]}`, code: 400, want: "messages", param: "messages"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := c.gen
			if g == nil {
				g = &fakeGen{}
			}
			srv, _, logs := fakeServer(t, g, c.edit)
			method, path := c.method, c.path
			if method == "" {
				method = "POST"
			}
			if path == "" {
				path = "/v1/completions"
			}
			code, out := call(t, method, srv.URL+path, c.body, c.header...)
			var e struct {
				Error *struct {
					Message string  `json:"message"`
					Type    string  `json:"type"`
					Param   *string `json:"param"`
					Code    *string `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal([]byte(out), &e); err != nil || e.Error == nil || e.Error.Type == "" {
				t.Fatalf("%d %s: not an OpenAI error object (%v)", code, out, err)
			}
			if code != c.code || !strings.Contains(e.Error.Message, c.want) {
				t.Errorf("%d %q; want %d and a message with %q", code, e.Error.Message, c.code, c.want)
			}
			if c.param != "" && (e.Error.Param == nil || *e.Error.Param != c.param) {
				t.Errorf("param %v, want %q (%s)", e.Error.Param, c.param, out)
			}
			n := strings.Count(logs.String(), "\n")
			if c.name == "panic" && (n != 1 || !strings.Contains(logs.String(), "panic serving POST /v1/completions: fake engine: boom")) {
				t.Errorf("log of a panic: %q, want one line", logs.String())
			}
			if c.name != "panic" && n != 0 {
				t.Errorf("log: %q", logs.String())
			}
			// the server answers afterwards
			if c.gen == nil {
				hdr := []string{"Authorization", "Bearer sk-test"}
				if code, out := call(t, "POST", srv.URL+"/v1/completions", `{"prompt": "a", "max_tokens": 2}`, hdr...); code != 200 || decode(t, out).Choices[0].Text != "he" {
					t.Errorf("afterwards: %d %s", code, out)
				}
			}
		})
	}
}

// TestErrorMidStream: a failure after the first token is sent as a chunk
// holding an error object, then [DONE].
func TestErrorMidStream(t *testing.T) {
	srv, _, _ := fakeServer(t, &fakeGen{failErr: errNaN, failAt: 3}, nil)
	code, out := call(t, "POST", srv.URL+"/v1/completions", `{"prompt": "a", "stream": true}`)
	evs, done := events(t, out)
	if code != 200 || !done || len(evs) < 2 || !strings.Contains(evs[len(evs)-1], `{"error":{"message":"generation failed: the logits are not finite`) {
		t.Errorf("%d %s", code, out)
	}
}

// TestAuthorized: with an API key, the right Bearer token is served, and
// /health and /metrics need none.
func TestAuthorized(t *testing.T) {
	srv, _, _ := fakeServer(t, &fakeGen{}, func(o *HandlerOptions) { o.APIKey = "sk-test" })
	if code, out := call(t, "POST", srv.URL+"/v1/completions", `{"prompt": "a"}`, "Authorization", "Bearer sk-test"); code != 200 {
		t.Errorf("with the key: %d %s", code, out)
	}
	for _, p := range []string{"/health", "/metrics"} {
		if code, out := call(t, "GET", srv.URL+p, ""); code != 200 {
			t.Errorf("%s: %d %s", p, code, out)
		}
	}
}

// TestInFlightAndDrain: past MaxInFlight requests get 429; after Drain,
// new requests get 503 and /health 503, while those in flight finish.
func TestInFlightAndDrain(t *testing.T) {
	f := &fakeGen{block: make(chan struct{})}
	srv, h, _ := fakeServer(t, f, func(o *HandlerOptions) { o.MaxInFlight = 2 })
	results := make(chan string, 2)
	for range 2 {
		go func() {
			_, out := call(t, "POST", srv.URL+"/v1/completions", `{"prompt": "a", "max_tokens": 3}`)
			results <- out
		}()
	}
	for len(f.requests()) < 2 {
		time.Sleep(time.Millisecond)
	}
	if code, out := call(t, "POST", srv.URL+"/v1/completions", `{"prompt": "a"}`); code != 429 || !strings.Contains(out, "too many requests in flight") {
		t.Errorf("third request: %d %s", code, out)
	}
	h.Drain()
	if code, out := call(t, "POST", srv.URL+"/v1/chat/completions", `{"messages": [{"role": "user", "content": "a"}]}`); code != 503 {
		t.Errorf("after Drain: %d %s", code, out)
	}
	if code, _ := call(t, "GET", srv.URL+"/health", ""); code != 503 {
		t.Errorf("/health after Drain: %d", code)
	}
	close(f.block)
	for range 2 {
		if c := decode(t, <-results); c.Choices[0].Text != "hel" {
			t.Errorf("in flight: %+v", c)
		}
	}
}

// promLine is a sample line of Prometheus' text format.
var promLine = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="[^"]*",?)*\})? [0-9.e+-]+|\+Inf$`)

func TestMetrics(t *testing.T) {
	srv, _, _ := fakeServer(t, &fakeGen{}, nil)
	call(t, "POST", srv.URL+"/v1/completions", `{"prompt": "abc", "max_tokens": 4}`)
	call(t, "POST", srv.URL+"/v1/completions", `{"prompt": "abc", "temperature": 1e-300}`)
	call(t, "GET", srv.URL+"/v1/models", "")
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("Content-Type %q", ct)
	}
	text := string(b)
	types := map[string]string{}
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "# HELP "):
		case strings.HasPrefix(line, "# TYPE "):
			f := strings.Fields(line)
			types[f[2]] = f[3]
		case !promLine.MatchString(line):
			t.Errorf("not a Prometheus sample line: %q", line)
		}
	}
	for _, want := range []string{
		`wick_requests_total{endpoint="/v1/completions",status="200"} 1`,
		`wick_requests_total{endpoint="/v1/completions",status="400"} 1`,
		`wick_requests_total{endpoint="/v1/models",status="200"} 1`,
		"wick_prompt_tokens_total 3", "wick_completion_tokens_total 4",
		"wick_running_sequences 2", "wick_waiting_sequences 1", "wick_kv_blocks_used 3", "wick_kv_blocks_total 10",
		// BatchSizes [0 3 2 0 1]: 3 steps of 1, 2 of 2, 1 of 4
		`wick_batch_size_bucket{le="1"} 3`, `wick_batch_size_bucket{le="2"} 5`, `wick_batch_size_bucket{le="4"} 6`,
		`wick_batch_size_bucket{le="+Inf"} 6`, "wick_batch_size_sum 11", "wick_batch_size_count 6",
		`wick_time_to_first_token_seconds_bucket{le="+Inf"} 1`, "wick_time_to_first_token_seconds_count 1",
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("no line %q in\n%s", want, text)
		}
	}
	if m := regexp.MustCompile(`(?m)^go_goroutines (\d+)$`).FindStringSubmatch(text); m == nil || m[1] == "0" {
		t.Errorf("no positive go_goroutines line in\n%s", text)
	}
	if types["wick_batch_size"] != "histogram" || types["wick_requests_total"] != "counter" || types["wick_running_sequences"] != "gauge" || types["go_goroutines"] != "gauge" {
		t.Errorf("types %v", types)
	}
}

// TestClientGone: a client that goes away mid-stream cancels its
// request's context, so the engine frees its place at once.
func TestClientGone(t *testing.T) {
	f := &fakeGen{block: make(chan struct{})}
	srv, _, _ := fakeServer(t, f, nil)
	go func() { f.block <- struct{}{} }() // one token: the answer starts
	resp, err := http.Post(srv.URL+"/v1/completions", "application/json", strings.NewReader(`{"prompt": "a", "max_tokens": 30, "stream": true}`))
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, `data: {"id":"cmpl-`) {
		t.Fatalf("first line %q, %v", line, err)
	}
	resp.Body.Close() // and the connection with it
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(time.Millisecond) {
		f.mu.Lock()
		n := f.cancels
		f.mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the request was not cancelled within 20 s of its client leaving")
		}
	}
}

// TestStreamChoices: n choices streamed, chat with its usage: each
// choice's chunks carry its index, its role comes first, each finishes
// once, and the texts equal the whole answer's.
func TestStreamChoices(t *testing.T) {
	f := &fakeGen{script: func(r Request) []int { return ids(fmt.Sprintf("seed %c", 'a'+rune(r.Seed%26))) }}
	srv, _, _ := fakeServer(t, f, func(o *HandlerOptions) { o.ChatStopTokenIDs = nil })
	body := `"messages": [{"role": "user", "content": "hi"}], "n": 3, "seed": 4, "max_tokens": 20`
	code, out := call(t, "POST", srv.URL+"/v1/chat/completions", `{`+body+`}`)
	whole := decode(t, out)
	if code != 200 || len(whole.Choices) != 3 {
		t.Fatalf("%d %s", code, out)
	}
	code, out = call(t, "POST", srv.URL+"/v1/chat/completions", `{`+body+`, "stream": true, "stream_options": {"include_usage": true}}`)
	evs, done := events(t, out)
	if code != 200 || !done {
		t.Fatalf("%d %s", code, out)
	}
	texts := make([]string, 3)
	roles, finishes := make([]int, 3), make([]int, 3)
	var u *usage
	for _, e := range evs {
		c := decode(t, e)
		if c.Usage != nil {
			u = c.Usage
			continue
		}
		ch := c.Choices[0]
		if ch.Delta.Role != nil {
			if texts[ch.Index] != "" || finishes[ch.Index] > 0 {
				t.Errorf("choice %d: the role after its content", ch.Index)
			}
			roles[ch.Index]++
		}
		if ch.Delta.Content != nil {
			texts[ch.Index] += *ch.Delta.Content
		}
		if ch.FinishReason != nil {
			finishes[ch.Index]++
		}
	}
	for i := range 3 {
		if want := whole.Choices[i].Message.Content; texts[i] != want || want != fmt.Sprintf("seed %c", 'e'+rune(i)) || roles[i] != 1 || finishes[i] != 1 {
			t.Errorf("choice %d: streamed %q (roles %d, finishes %d), whole %q", i, texts[i], roles[i], finishes[i], want)
		}
	}
	if u == nil || *u != *whole.Usage || u.CompletionTokens != 18 || u.PromptTokens != whole.Usage.PromptTokens {
		t.Errorf("usage %+v, whole %+v", u, whole.Usage)
	}
}

// bangTok is the test tokenizer, whose Decode panics on "!".
type bangTok struct{ tokenizer.Tokenizer }

func (b bangTok) Decode(v []int) string {
	s := b.Tokenizer.Decode(v)
	if strings.Contains(s, "!") {
		panic("bang")
	}
	return s
}

// TestPanicWhileStreaming: a panic while a request's tokens are decoded
// (on a goroutine of its own) is answered 500, or as an error chunk once
// the stream began, logged on one line; the server goes on.
func TestPanicWhileStreaming(t *testing.T) {
	f := &fakeGen{script: func(Request) []int { return ids("hi there!") }}
	srv, _, logs := fakeServer(t, f, func(o *HandlerOptions) { o.Tokenizer = bangTok{testTok} })
	code, out := call(t, "POST", srv.URL+"/v1/completions", `{"prompt": "a", "max_tokens": 20}`)
	if code != 500 || !strings.Contains(out, "internal error: bang") {
		t.Errorf("whole: %d %s", code, out)
	}
	code, out = call(t, "POST", srv.URL+"/v1/completions", `{"prompt": "a", "max_tokens": 20, "stream": true}`)
	evs, done := events(t, out)
	if code != 200 || !done || !strings.Contains(evs[len(evs)-1], `"message":"generation failed: internal error: bang"`) {
		t.Errorf("streamed: %d %s", code, out)
	}
	if n := strings.Count(logs.String(), "\n"); n != 2 || !strings.Contains(logs.String(), "panic following a request: bang") {
		t.Errorf("log %q, want a line per panic", logs.String())
	}
	if code, out := call(t, "POST", srv.URL+"/v1/completions", `{"prompt": "a", "max_tokens": 3}`); code != 200 || decode(t, out).Choices[0].Text != "hi " {
		t.Errorf("afterwards: %d %s", code, out)
	}
}
