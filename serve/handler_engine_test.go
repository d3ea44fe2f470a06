package serve

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wickml/wick/chat"
	"github.com/wickml/wick/internal/httplimit"
	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
)

// apiGPT is a small random GPT over the test tokenizer, in eval mode,
// with a context of 64.
func apiGPT() *nn.GPT {
	cfg := nn.GPTConfig{VocabSize: testTok.VocabSize(), BlockSize: 64, NLayer: 2, NHead: 2, NEmbd: 16, Bias: true}
	m := nn.NewGPTWith(cfg, tensor.NewGenerator(5))
	m.Eval()
	return m
}

// smallBuffers is a listener whose connections have a small send buffer,
// so that a client that never reads fills them after a few answers.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(8 << 10)
	}
	return c, err
}

// engineServer serves m through a real Engine (cfg) and a Handler on
// 127.0.0.1, within lim's timeouts, and returns the base URL, the handler
// and its log; both stop at the end of the test, and the test fails if
// the log holds a panic.
func engineServer(t *testing.T, m nn.CausalLM, cfg Config, lim httplimit.Limits, edit func(*HandlerOptions)) (string, *Handler, *syncBuffer) {
	t.Helper()
	cfg.Model = m
	eng, err := NewEngine(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := chat.Compile(testChat, "", "")
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	o := HandlerOptions{ModelName: "tiny", Tokenizer: testTok, ContextSize: m.ContextSize(), MaxTokens: 48,
		ChatTemplate: tmpl, MaxBodyBytes: 4 << 10, Logger: log.New(logs, "", 0)}
	if edit != nil {
		edit(&o)
	}
	h := NewHandler(eng, o)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := lim.TimeoutServer(h, log.New(logs, "", 0))
	done := make(chan error, 1)
	go func() { done <- srv.Serve(smallBuffers{ln}) }()
	t.Cleanup(func() {
		h.Drain()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := eng.Shutdown(ctx); err != nil {
			t.Errorf("engine shutdown: %v", err)
		}
		<-done
		if strings.Contains(logs.String(), "panic") {
			t.Errorf("server log:\n%s", logs.String())
		}
	})
	return "http://" + ln.Addr().String(), h, logs
}

// testLimits are limits small enough for a test to reach each of them,
// and large enough for clients on a busy machine (or under -race) to send
// their requests in time.
func testLimits() httplimit.Limits {
	return httplimit.Limits{
		MaxHeaderBytes: 8 << 10, ReadHeaderTimeout: time.Second, ReadTimeout: 1500 * time.Millisecond,
		WriteTimeout: 2 * time.Second, IdleTimeout: 2 * time.Second,
	}
}

// roomyLimits are the timeouts of tests that do not test them.
func roomyLimits() httplimit.Limits {
	return httplimit.Limits{ReadHeaderTimeout: 20 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: time.Minute, IdleTimeout: time.Minute}
}

// text returns the text of an answer: whole, or the streamed chunks'
// texts (or deltas) added up, with the finish reason.
func answerText(t *testing.T, code int, body string) (string, string) {
	t.Helper()
	if code != 200 {
		t.Fatalf("status %d: %s", code, body)
	}
	if !strings.HasPrefix(body, "data: ") {
		c := decode(t, body)
		if c.Choices[0].Message != nil {
			return c.Choices[0].Message.Content, *c.Choices[0].FinishReason
		}
		return c.Choices[0].Text, *c.Choices[0].FinishReason
	}
	evs, done := events(t, body)
	if !done {
		t.Fatalf("stream without [DONE]: %s", body)
	}
	text, finish := "", ""
	for _, e := range evs {
		c := decode(t, e)
		if len(c.Choices) == 0 {
			continue
		}
		ch := c.Choices[0]
		text += ch.Text
		if ch.Delta != nil && ch.Delta.Content != nil {
			text += *ch.Delta.Content
		}
		if ch.FinishReason != nil {
			finish = *ch.FinishReason
		}
	}
	return text, finish
}

// TestAPIGreedyMatchesGenerate: temperature 0 answers, whole and
// streamed, are the library's greedy generation (nn.Generate); a stop
// string cuts them before it.
func TestAPIGreedyMatchesGenerate(t *testing.T) {
	m := apiGPT()
	base, _, _ := engineServer(t, m, Config{MaxBatch: 4}, roomyLimits(), nil)
	for _, prompt := range []string{"to be", "the cat sat", "a"} {
		p := ids(prompt)
		out, err := nn.Generate(m, tensor.FromInts(p, 1, len(p)), nn.GenerateOptions{MaxNewTokens: 30, Temperature: 0})
		if err != nil {
			t.Fatal(err)
		}
		want := testTok.Decode(out.Ints()[len(p):])
		for _, stream := range []string{"false", "true"} {
			got, finish := ask(t, "POST", base+"/v1/completions", `{"prompt": "`+prompt+`", "max_tokens": 30, "temperature": 0, "stream": `+stream+`}`)
			if got != want || finish != "length" {
				t.Errorf("%q stream=%s: %q (%s), want nn.Generate's %q", prompt, stream, got, finish, want)
			}
			// a stop string from the middle of the answer
			stop := want[10:13]
			got, finish = ask(t, "POST", base+"/v1/completions", `{"prompt": "`+prompt+`", "max_tokens": 30, "temperature": 0, "stop": ["`+stop+`"], "stream": `+stream+`}`)
			if got != want[:strings.Index(want, stop)] || finish != "stop" {
				t.Errorf("%q stop %q stream=%s: %q (%s), want %q", prompt, stop, stream, got, finish, want[:strings.Index(want, stop)])
			}
		}
	}
	// chat: the template's rendering, continued greedily
	rendered := "user: hi\nassistant:"
	p := ids(rendered)
	out, err := nn.Generate(m, tensor.FromInts(p, 1, len(p)), nn.GenerateOptions{MaxNewTokens: 20})
	if err != nil {
		t.Fatal(err)
	}
	want := testTok.Decode(out.Ints()[len(p):])
	for _, stream := range []string{"false", "true"} {
		got, _ := ask(t, "POST", base+"/v1/chat/completions", `{"messages": [{"role": "user", "content": "hi"}], "max_tokens": 20, "temperature": 0, "stream": `+stream+`}`)
		if got != want {
			t.Errorf("chat stream=%s: %q, want %q", stream, got, want)
		}
	}
}

// callNoT is call for goroutines: it returns an error as status 0. Each
// call has a connection of its own, so that none meets a keep-alive
// connection that the server's idle timeout is closing.
func callNoT(t *testing.T, method, url, body string) (int, string) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return 0, err.Error()
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	return resp.StatusCode, readAll(resp)
}

func readAll(resp *http.Response) string {
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.String()
		}
	}
}

// TestConcurrentRequestsMatchAlone: 64 requests at once, with their own
// seeds, prompts and sampling fields, whole and streamed, each get the
// answer of the same request served alone (the engine's batch invariance
// seen through the API).
func TestConcurrentRequestsMatchAlone(t *testing.T) {
	base, _, _ := engineServer(t, apiGPT(), Config{MaxBatch: 16, MaxWaiting: 64}, roomyLimits(), nil)
	prompts := []string{"a", "the cat", "to be, or", "\n"}
	bodies := make([]string, 64)
	for i := range bodies {
		bodies[i] = fmt.Sprintf(`{"prompt": %q, "seed": %d, "max_tokens": %d, "top_k": %d, "top_p": %g, "temperature": %g, "stream": %v}`,
			prompts[i%len(prompts)], 1000+i, 10+i%3*10, i%5*3, []float64{1, 0.9, 0.5}[i%3], 0.5+float64(i%4)*0.25, i%2 == 0)
	}
	together := make([]string, len(bodies))
	var wg sync.WaitGroup
	for i, b := range bodies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, out := callNoT(t, "POST", base+"/v1/completions", b)
			if code != 200 {
				t.Errorf("request %d: %d %s", i, code, out)
				return
			}
			together[i] = out
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	distinct := map[string]bool{}
	for i, b := range bodies {
		got, _ := answerText(t, 200, together[i])
		alone, _ := ask(t, "POST", base+"/v1/completions", b)
		if got != alone {
			t.Errorf("request %d %s: with 63 others %q, alone %q", i, b, got, alone)
		}
		distinct[alone] = true
	}
	if len(distinct) < len(bodies)/2 {
		t.Errorf("only %d distinct answers to %d requests with different seeds", len(distinct), len(bodies))
	}
}

// TestNonFiniteModel: a model with NaN or Inf weights answers 500 with an
// error saying the logits are not finite, whole and streamed, at any
// temperature; the server goes on answering.
func TestNonFiniteModel(t *testing.T) {
	for _, c := range []struct {
		name  string
		v     float32
		pick  func(*nn.GPT) *tensor.Tensor
		temps []string
	}{
		{"NaN", float32(math.NaN()), func(m *nn.GPT) *tensor.Tensor { return m.Wte.Weight }, []string{"0.8", "0", "1e-3", "100"}},
		{"Inf", float32(math.Inf(1)), func(m *nn.GPT) *tensor.Tensor { return m.LnF.Weight }, []string{"0.8", "0", "1e-3", "100"}},
		// ln_f's scale 1e37 gives logits of ~1e36, which temperature 1e-3
		// takes past float32
		{"overflow", 1e37, func(m *nn.GPT) *tensor.Tensor { return m.LnF.Weight }, []string{"1e-3", "1e-3"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := apiGPT()
			w := c.pick(m)
			w.Detach().CopyFrom(tensor.Full(c.v, w.Shape()...))
			base, _, _ := engineServer(t, m, Config{MaxBatch: 2}, roomyLimits(), nil)
			for i, temp := range c.temps {
				body := fmt.Sprintf(`{"prompt": "ab", "temperature": %s, "seed": %d, "stream": %v}`, temp, i, i%2 == 1)
				code, out := callNoT(t, "POST", base+"/v1/completions", body)
				if code != 500 || !strings.Contains(out, "finite") || !strings.Contains(out, `"error"`) {
					t.Errorf("%s: %d %s; want 500 saying what is not finite", body, code, out)
				}
			}
			if code, _ := callNoT(t, "GET", base+"/health", ""); code != 200 {
				t.Errorf("/health afterwards: %d", code)
			}
		})
	}
}

// TestLoadLimits drives one server at once with oversized bodies, senders
// of a byte at a time, clients that never read their answers, requests at
// temperatures 1e-300 and 1e-45, prompts over the context, and a burst
// past the requests in flight; each gets its bounded answer (or its
// connection closed), and afterwards the server answers as before. Every
// loop is bounded in count, every client by a deadline, all on 127.0.0.1.
func TestLoadLimits(t *testing.T) {
	base, _, _ := engineServer(t, apiGPT(), Config{MaxBatch: 2, MaxWaiting: 2}, testLimits(), func(o *HandlerOptions) {
		o.MaxInFlight = 6
		o.WriteTimeout = time.Second
	})
	addr := strings.TrimPrefix(base, "http://")
	normal := `{"prompt": "to be", "seed": 3, "max_tokens": 20}`
	_, want := callNoT(t, "POST", base+"/v1/completions", normal)
	want, _ = answerText(t, 200, want)

	var wg sync.WaitGroup
	var mu sync.Mutex
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		t.Errorf(format, args...)
	}
	spawn := func(n int, f func(i int)) {
		for i := range n {
			wg.Add(1)
			go func() { defer wg.Done(); f(i) }()
		}
	}
	busy := func(code int) bool {
		return code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable
	}
	big := `{"prompt": "` + strings.Repeat("a", 64<<10) + `"}`
	spawn(8, func(i int) {
		code, body := callNoT(t, "POST", base+"/v1/completions", big)
		// 413, 408 when sending took past ReadTimeout, or the
		// connection closed while sending (status 0)
		if code != 0 && code != http.StatusRequestEntityTooLarge && code != http.StatusRequestTimeout && !busy(code) {
			fail("oversized body %d: %d %.100s; want 413", i, code, body)
		}
	})
	spawn(4, func(i int) {
		code, body := callNoT(t, "POST", base+"/v1/completions", `{"prompt": "`+strings.Repeat("ab", 40)+`"}`)
		if !busy(code) && (code != 400 || !strings.Contains(body, "context of 64")) {
			fail("long prompt %d: %d %s; want 400 naming the context", i, code, body)
		}
	})
	spawn(8, func(i int) {
		temp := []string{"1e-300", "1e-45", "4.9e-324", "1e-4"}[i%4]
		path, body := "/v1/completions", `{"prompt": "a", "temperature": `+temp+`}`
		if i%2 == 1 {
			path, body = "/v1/chat/completions", `{"messages": [{"role": "user", "content": "a"}], "temperature": `+temp+`}`
		}
		code, body := callNoT(t, "POST", base+path, body)
		if !busy(code) && (code != 400 || !strings.Contains(body, "temperature")) {
			fail("temperature %s: %d %s; want 400 naming temperature", temp, code, body)
		}
	})
	// slow senders of headers and of bodies: the server hangs up
	spawn(6, func(i int) {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			fail("dial: %v", err)
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(20 * time.Second))
		msg := "GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Slow: " + strings.Repeat("s", 200) + "\r\n\r\n"
		if i%2 == 1 {
			msg = "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n{\"prompt\": \"" + strings.Repeat("a", 300)
		}
		for j := 0; j < len(msg); j++ {
			if _, err := c.Write([]byte{msg[j]}); err != nil {
				return // closed by the server: what we want
			}
			time.Sleep(20 * time.Millisecond)
		}
		b := make([]byte, 1<<10)
		n, err := c.Read(b)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			fail("slow sender %d: the server kept the connection open", i)
		}
		if strings.HasPrefix(string(b[:n]), "HTTP/1.1 200") {
			fail("slow sender %d: answered 200 after ReadTimeout: %.100s", i, b[:n])
		}
	})
	// clients that never read: pipelined requests fill the buffers, and
	// the write timeout closes the connection
	spawn(3, func(i int) {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			fail("dial: %v", err)
			return
		}
		defer c.Close()
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetReadBuffer(4 << 10)
		}
		const n = 400
		var reqs strings.Builder
		for j := range n {
			body := fmt.Sprintf(`{"prompt": "to be or not", "seed": %d, "max_tokens": 1}`, j)
			fmt.Fprintf(&reqs, "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		}
		c.SetDeadline(time.Now().Add(20 * time.Second))
		go c.Write([]byte(reqs.String())) // stops when the server hangs up
		time.Sleep(testLimits().WriteTimeout + 2*time.Second)
		var got strings.Builder
		buf := make([]byte, 64<<10)
		for {
			k, err := c.Read(buf)
			got.Write(buf[:k])
			if err != nil {
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					fail("non-reader %d: the connection was still open after 20 s", i)
				}
				break
			}
		}
		if answered := strings.Count(got.String(), "HTTP/1.1 200"); answered >= n {
			fail("non-reader %d: all %d answers were written; want the write timeout to cut the connection", i, answered)
		}
	})
	// a burst past the requests in flight: 200, 429 or 503, never a
	// dropped connection
	spawn(24, func(i int) {
		code, body := callNoT(t, "POST", base+"/v1/completions", fmt.Sprintf(`{"prompt": "the cat", "seed": %d, "max_tokens": 40, "stream": %v}`, i, i%2 == 0))
		if code != 200 && !busy(code) {
			fail("burst %d: %d %.200s; want 200, 429 or 503", i, code, body)
		}
	})
	wg.Wait()
	// afterwards: the same answer as before
	for _, stream := range []string{"false", "true"} {
		body := strings.Replace(normal, "}", `, "stream": `+stream+`}`, 1)
		if got, _ := ask(t, "POST", base+"/v1/completions", body); got != want {
			t.Errorf("after the load (stream=%s): %q, want %q", stream, got, want)
		}
	}
}

// loadFor is how long TestLoad64 runs: a few seconds in go test ./...,
// the 20 s of the issue in .ci/run (-args -load=20s).
var loadFor = flag.Duration("load", 5*time.Second, "how long TestLoad64 keeps its 64 connections busy")

// TestLoad64 keeps 64 connections busy for -load (5 s by default), whole
// and streamed, completions and chat, and counts the errors: none.
func TestLoad64(t *testing.T) {
	base, _, _ := engineServer(t, apiGPT(), Config{MaxBatch: 16, MaxWaiting: 64}, roomyLimits(), nil)
	stop := time.Now().Add(*loadFor)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []string
	total := 0
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxConnsPerHost: 1}}
			for k := 0; time.Now().Before(stop); k++ {
				path, body := "/v1/completions", fmt.Sprintf(`{"prompt": "to be", "seed": %d, "max_tokens": %d, "stream": %v}`, i*1000+k, 4+k%12, k%2 == 0)
				if i%4 == 3 {
					path, body = "/v1/chat/completions", fmt.Sprintf(`{"messages": [{"role": "user", "content": "hi"}], "seed": %d, "max_tokens": 8, "stream": %v}`, k, k%2 == 0)
				}
				resp, err := client.Post(base+path, "application/json", strings.NewReader(body))
				msg := ""
				if err != nil {
					msg = err.Error()
				} else {
					out := readAll(resp)
					resp.Body.Close()
					if resp.StatusCode != 200 || (strings.HasPrefix(out, "data:") && !strings.HasSuffix(out, "data: [DONE]\n\n")) || (!strings.HasPrefix(out, "data:") && !json.Valid([]byte(out))) {
						msg = fmt.Sprintf("%d %.200s", resp.StatusCode, out)
					}
				}
				mu.Lock()
				total++
				if msg != "" {
					errs = append(errs, msg)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	t.Logf("%d requests on 64 connections, %d errors", total, len(errs))
	if len(errs) > 0 {
		t.Errorf("%d of %d requests failed; the first: %s", len(errs), total, errs[0])
	}
}

// ask sends a request and returns its answer's text and finish reason.
func ask(t *testing.T, method, url, body string) (string, string) {
	t.Helper()
	code, out := callNoT(t, method, url, body)
	return answerText(t, code, out)
}

// TestDisconnectsLeakNothing: clients that leave mid-stream or before
// their answer, among others that stay, leave no request in flight, no
// sequence in the engine and no KV block in use.
func TestDisconnectsLeakNothing(t *testing.T) {
	base, h, _ := engineServer(t, apiGPT(), Config{MaxBatch: 4, MaxWaiting: 64}, roomyLimits(), nil)
	var wg sync.WaitGroup
	for i := range 48 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			body := fmt.Sprintf(`{"prompt": "to be", "seed": %d, "max_tokens": 48, "stream": %v}`, i, i%3 != 2)
			req, _ := http.NewRequestWithContext(ctx, "POST", base+"/v1/completions", strings.NewReader(body))
			client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
			if i%3 == 1 {
				// leave before the answer
				go func() { time.Sleep(time.Duration(i) * time.Millisecond); cancel() }()
			}
			resp, err := client.Do(req)
			if err != nil {
				return
			}
			defer resp.Body.Close()
			if i%3 == 0 {
				// leave after the first chunk
				buf := make([]byte, 64)
				resp.Body.Read(buf)
				return
			}
			readAll(resp)
		}()
	}
	wg.Wait()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(time.Millisecond) {
		st := h.g.Stats()
		if st.Running == 0 && st.Waiting == 0 && st.BlocksUsed == 0 && h.inFlight.Load() == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("20 s after the clients left: %+v, %d requests in flight", st, h.inFlight.Load())
		}
	}
}
