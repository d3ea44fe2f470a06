//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wickml/wick/internal/httplimit"
	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
)

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

// testLimits are limits small enough for a test to reach each of them.
func testLimits() httplimit.Limits {
	return httplimit.Limits{
		MaxBodyBytes: 4 << 10, MaxHeaderBytes: 8 << 10,
		MaxInFlight: 2, MaxQueued: 2, QueueTimeout: 5 * time.Second,
		ReadHeaderTimeout: 300 * time.Millisecond, ReadTimeout: 500 * time.Millisecond,
		WriteTimeout: 2 * time.Second, IdleTimeout: 500 * time.Millisecond,
	}
}

// startLimited serves s within testLimits on 127.0.0.1 through a listener
// with small send buffers and returns the address and the log.
func startLimited(t *testing.T, s *server) (string, *syncBuffer) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	done := make(chan error)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { done <- serve(ctx, smallBuffers{ln}, s, testLimits(), log.New(logs, "serve: ", 0)) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve after shutdown: %v", err)
		}
	})
	return ln.Addr().String(), logs
}

// corrupt returns a server for the test model with every weight of the
// tensor pick chooses set to v.
func corrupt(t *testing.T, v float32, pick func(*nn.GPT) *tensor.Tensor) *server {
	t.Helper()
	ck, err := nn.LoadCheckpoint(writeCheckpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	w := pick(ck.Model)
	w.Detach().CopyFrom(tensor.Full(v, w.Shape()...))
	return newServer(ck.Model, ck.Tokenizer, 200)
}

// client is an HTTP client that gives up after 20 s, the bound of every
// call in these tests.
var client = &http.Client{Timeout: 20 * time.Second}

func status(base, method, ctype, body string, q url.Values) (int, string, error) {
	req, err := http.NewRequest(method, "http://"+base+"/generate?"+q.Encode(), strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// TestLoadLimits drives one server at once with oversized bodies, senders
// of a byte at a time, clients that never read their answers, requests at
// temperatures 1e-300 and 1e-45, and a burst past the requests in flight
// and queued; each gets its bounded answer (or its connection closed),
// and afterwards the server answers as before. Every loop is bounded in
// count, every client by a deadline, all on 127.0.0.1.
func TestLoadLimits(t *testing.T) {
	ck, err := nn.LoadCheckpoint(writeCheckpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(ck.Model, ck.Tokenizer, 200)
	addr, logs := startLimited(t, s)
	normal := url.Values{"prompt": {"to be"}, "seed": {"3"}, "max_new_tokens": {"20"}}
	_, want, err := status(addr, "GET", "", "", normal)
	if err != nil {
		t.Fatal(err)
	}

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
	// oversized bodies: 413 (408 when sending them took past ReadTimeout),
	// or the connection closed while sending
	big := `{"prompt": "` + strings.Repeat("a", 64<<10) + `"}`
	spawn(8, func(i int) {
		code, body, err := status(addr, "POST", "application/json", big, nil)
		if err == nil && code != http.StatusRequestEntityTooLarge && code != http.StatusRequestTimeout && !busy(code) {
			fail("oversized body %d: status %d %.100s; want 413", i, code, body)
		}
	})
	// a prompt of more tokens than the context (16), within the body limit
	spawn(4, func(i int) {
		code, body, err := status(addr, "POST", "application/json", `{"prompt": "`+strings.Repeat("ab", 100)+`"}`, nil)
		if err != nil || !busy(code) && (code != http.StatusBadRequest || !strings.Contains(body, "context of 16")) {
			fail("long prompt %d: %d %s %v; want 400 naming the context", i, code, body, err)
		}
	})
	// temperatures below the floor: 400, never a dropped connection
	spawn(8, func(i int) {
		temp := []string{"1e-300", "1e-45", "4.9e-324", "1e-4"}[i%4]
		var code int
		var body string
		var err error
		if i%2 == 0 {
			code, body, err = status(addr, "GET", "", "", url.Values{"temperature": {temp}})
		} else {
			code, body, err = status(addr, "POST", "application/json", `{"temperature": `+temp+`}`, nil)
		}
		if err != nil || !busy(code) && (code != http.StatusBadRequest || !strings.Contains(body, "temperature")) {
			fail("temperature %s: %d %s %v; want 400 naming temperature", temp, code, body, err)
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
		msg := "GET /generate?prompt=a HTTP/1.1\r\nHost: x\r\nX-Slow: " + strings.Repeat("s", 200) + "\r\n\r\n"
		if i%2 == 1 {
			msg = "POST /generate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n{\"prompt\": \"" + strings.Repeat("a", 300)
		}
		for j := 0; j < len(msg); j++ {
			if _, err := c.Write([]byte{msg[j]}); err != nil {
				return // closed by the server: what we want
			}
			time.Sleep(20 * time.Millisecond)
		}
		// all sent, slowly: the request timed out before its end
		b, err := io.ReadAll(c)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			fail("slow sender %d: the server kept the connection open", i)
		}
		if bytes.HasPrefix(b, []byte("HTTP/1.1 200")) {
			fail("slow sender %d: answered 200 after ReadTimeout: %.100s", i, b)
		}
	})
	// clients that never read: pipelined requests fill the buffers, and
	// the write timeout closes the connection
	spawn(3, func(i int) {
		// a small receive window from the start
		d := net.Dialer{Timeout: 5 * time.Second, Control: func(_, _ string, rc syscall.RawConn) error {
			return rc.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4<<10) })
		}}
		c, err := d.Dial("tcp", addr)
		if err != nil {
			fail("dial: %v", err)
			return
		}
		defer c.Close()
		// cheap requests (no new token) with ~250-byte answers: 600 of
		// them are far more than the buffers hold
		const n = 600
		var reqs bytes.Buffer
		for j := range n {
			fmt.Fprintf(&reqs, "GET /generate?prompt=to+be+or+not&seed=%d&max_new_tokens=0 HTTP/1.1\r\nHost: x\r\n\r\n", j)
		}
		c.SetDeadline(time.Now().Add(20 * time.Second))
		go c.Write(reqs.Bytes()) // stops when the server hangs up
		time.Sleep(testLimits().WriteTimeout + time.Second)
		b, err := io.ReadAll(c)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			fail("non-reader %d: the connection was still open after 20 s", i)
		}
		got := bytes.Count(b, []byte("HTTP/1.1 200"))
		t.Logf("non-reader %d: %d of %d answers before the server hung up", i, got, n)
		if got >= n {
			fail("non-reader %d: all %d answers were written; want the write timeout to cut the connection", i, got)
		}
	})
	// a burst past the requests in flight and queued: 200, 429 or 503,
	// never a dropped connection
	var codes sync.Map
	spawn(24, func(i int) {
		q := url.Values{"prompt": {"the cat"}, "seed": {fmt.Sprint(i)}, "max_new_tokens": {"200"}}
		code, body, err := status(addr, "GET", "", "", q)
		if err != nil || (code != 200 && !busy(code)) {
			fail("burst %d: %d %.100s %v; want 200, 429 or 503", i, code, body, err)
		}
		codes.Store(i, code)
	})
	wg.Wait()
	n429 := 0
	codes.Range(func(_, v any) bool {
		if v.(int) == http.StatusTooManyRequests {
			n429++
		}
		return true
	})
	t.Logf("burst of 24: %d answered 429", n429)

	// afterwards: the same answer as before, and a JSON body is read
	if _, got, err := status(addr, "GET", "", "", normal); err != nil || got != want {
		t.Errorf("after the load: %q, %v; want %q", got, err, want)
	}
	code, got, err := status(addr, "POST", "application/json", `{"prompt": "to be", "seed": 3, "max_new_tokens": 20}`, nil)
	if err != nil || code != 200 || got != want {
		t.Errorf("JSON body after the load: %d %q, %v; want %q", code, got, err, want)
	}
	for _, c := range []struct {
		method, ctype, body string
		q                   url.Values
		code                int
		want                string
	}{
		{"POST", "application/json", big, nil, http.StatusRequestEntityTooLarge, "larger than 4096 bytes"},
		{"POST", "application/json", `{"prompt": "` + strings.Repeat("ab", 100) + `"}`, nil, http.StatusBadRequest, "context of 16"},
		{"GET", "", "", url.Values{"temperature": {"1e-300"}}, http.StatusBadRequest, "temperature=1e-300 is below"},
		{"POST", "application/json", `{"temperature": 1e-45}`, nil, http.StatusBadRequest, "temperature=1e-45 is below"},
		{"POST", "application/json", `{"temprature": 0.5}`, nil, http.StatusBadRequest, "unknown field"},
		{"POST", "application/json", `{"prompt": "a"} {}`, nil, http.StatusBadRequest, "data after the JSON object"},
		{"POST", "text/plain", "hello", nil, http.StatusUnsupportedMediaType, "Content-Type text/plain"},
	} {
		code, body, err := status(addr, c.method, c.ctype, c.body, c.q)
		if err != nil || code != c.code || !strings.Contains(body, c.want) {
			t.Errorf("%s %s %.40s: %d %s %v; want %d and %q", c.method, c.ctype, c.body, code, body, err, c.code, c.want)
		}
	}
	if strings.Contains(logs.String(), "panic") || strings.Contains(logs.String(), "goroutine ") {
		t.Errorf("server log:\n%s", logs.String())
	}
}

// busy reports whether code is the answer of a full server: 429 or 503.
func busy(code int) bool {
	return code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable
}

// TestNonFiniteModel: a model with NaN or Inf weights, or with finite
// weights whose logits overflow at a low temperature, answers 500 with an
// error saying what is not finite; the server goes on answering.
func TestNonFiniteModel(t *testing.T) {
	wte := func(m *nn.GPT) *tensor.Tensor { return m.Wte.Weight }
	lnf := func(m *nn.GPT) *tensor.Tensor { return m.LnF.Weight }
	for _, c := range []struct {
		name  string
		v     float32
		pick  func(*nn.GPT) *tensor.Tensor
		temps []string
		want  string
	}{
		{"NaN", float32(math.NaN()), wte, []string{"0.8", "0", "1e-3", "100"}, "weights are not finite (NaN in transformer.wte.weight)"},
		{"Inf", float32(math.Inf(1)), lnf, []string{"0.8", "0"}, "weights are not finite (Inf in transformer.ln_f.weight)"},
		// ln_f's scale 1e37 gives logits of ~1e36, which temperature 1e-3
		// takes past float32
		{"overflow", 1e37, lnf, []string{"1e-3"}, "logits are not finite"},
	} {
		t.Run(c.name, func(t *testing.T) {
			addr, logs := startLimited(t, corrupt(t, c.v, c.pick))
			// one at a time: no 429 from the queue
			for i := range 6 {
				temp := c.temps[i%len(c.temps)]
				q := url.Values{"seed": {fmt.Sprint(i)}, "temperature": {temp}}
				code, body, err := status(addr, "GET", "", "", q)
				var e map[string]string
				if err != nil || code != http.StatusInternalServerError || json.Unmarshal([]byte(body), &e) != nil || !strings.Contains(e["error"], c.want) {
					t.Errorf("request %d (temperature %s): %d %s %v; want 500 and an error saying %q", i, temp, code, body, err, c.want)
				}
			}
			if strings.Contains(logs.String(), "panic") {
				t.Errorf("server log:\n%s", logs.String())
			}
		})
	}
}
