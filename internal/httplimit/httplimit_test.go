package httplimit

import (
	"bytes"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a log that many goroutines may write.
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

// serveWith starts l.Server(h) on 127.0.0.1 and returns its URL and log.
func serveWith(t *testing.T, l Limits, h http.Handler) (string, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	srv := httptest.NewUnstartedServer(nil)
	srv.Config = l.Server(h, log.New(logs, "", 0))
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL, logs
}

func getStatus(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestPanicAnswers500: a panicking handler gets its client a 500 with a
// JSON error, the log one line, and the server goes on answering.
func TestPanicAnswers500(t *testing.T) {
	url, logs := serveWith(t, Default(), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/boom" {
			var m map[string]int
			m["x"]++ // a nil-map panic, as a bug would
		}
		io.WriteString(w, "ok")
	}))
	for range 3 {
		code, body := getStatus(t, url+"/boom")
		var e map[string]string
		if code != http.StatusInternalServerError || json.Unmarshal([]byte(body), &e) != nil || !strings.Contains(e["error"], "internal error") {
			t.Errorf("panicking handler: status %d, body %q; want 500 and a JSON error", code, body)
		}
	}
	if code, body := getStatus(t, url+"/fine"); code != 200 || body != "ok" {
		t.Errorf("after the panics: status %d, body %q", code, body)
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "panic serving GET /boom: assignment to entry in nil map") || strings.Contains(logs.String(), "goroutine") {
		t.Errorf("log: %q; want one line for each of the 3 panics", logs.String())
	}
}

// TestAdmission: past MaxInFlight requests wait in a queue of MaxQueued;
// a full queue is answered 429 and a wait past QueueTimeout 503, both
// with Retry-After.
func TestAdmission(t *testing.T) {
	entered, release := make(chan struct{}, 4), make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hold" {
			entered <- struct{}{}
			<-release
		}
		io.WriteString(w, "ok")
	})
	for _, c := range []struct {
		queued int
		want   int
	}{{0, http.StatusTooManyRequests}, {1, http.StatusServiceUnavailable}} {
		l := Default()
		l.MaxInFlight, l.MaxQueued, l.QueueTimeout = 1, c.queued, 50*time.Millisecond
		url, _ := serveWith(t, l, h)
		done := make(chan int)
		go func() {
			resp, err := http.Get(url + "/hold")
			if err != nil {
				done <- 0
				return
			}
			resp.Body.Close()
			done <- resp.StatusCode
		}()
		<-entered // the only slot is taken
		resp, err := http.Get(url + "/other")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want || resp.Header.Get("Retry-After") == "" {
			t.Errorf("MaxQueued %d, slot taken: status %d, Retry-After %q; want %d and Retry-After", c.queued, resp.StatusCode, resp.Header.Get("Retry-After"), c.want)
		}
		release <- struct{}{}
		if code := <-done; code != 200 {
			t.Errorf("the held request: status %d", code)
		}
		if code, _ := getStatus(t, url+"/other"); code != 200 {
			t.Errorf("after the slot is free: status %d", code)
		}
	}
}

// TestBodyLimit: a handler reading a body past MaxBodyBytes gets an error
// that BodyError turns into 413.
func TestBodyLimit(t *testing.T) {
	l := Default()
	l.MaxBodyBytes = 100
	url, _ := serveWith(t, l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			code, msg := BodyError(err)
			Error(w, code, msg)
			return
		}
		io.WriteString(w, "ok")
	}))
	for _, c := range []struct {
		n    int
		want int
	}{{100, 200}, {101, http.StatusRequestEntityTooLarge}, {10000, http.StatusRequestEntityTooLarge}} {
		resp, err := http.Post(url, "text/plain", strings.NewReader(strings.Repeat("x", c.n)))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.want || (c.want != 200 && !strings.Contains(string(b), "larger than 100 bytes")) {
			t.Errorf("%d-byte body: status %d, %s; want %d", c.n, resp.StatusCode, b, c.want)
		}
	}
}

// TestTimeoutServer: the server has the limits' timeouts and header bound
// and serves the handler as it is (no admission, no body limit).
func TestTimeoutServer(t *testing.T) {
	l := Limits{MaxBodyBytes: 4, MaxInFlight: 1, MaxHeaderBytes: 1 << 10, ReadHeaderTimeout: time.Second,
		ReadTimeout: 2 * time.Second, WriteTimeout: 3 * time.Second, IdleTimeout: 4 * time.Second}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("reading the body: %v", err)
		}
		w.Write(b)
	})
	s := l.TimeoutServer(h, log.New(io.Discard, "", 0))
	if s.ReadHeaderTimeout != time.Second || s.ReadTimeout != 2*time.Second || s.WriteTimeout != 3*time.Second || s.IdleTimeout != 4*time.Second || s.MaxHeaderBytes != 1<<10 {
		t.Errorf("server %+v, want the limits' timeouts", s)
	}
	srv := httptest.NewUnstartedServer(nil)
	srv.Config = s
	srv.Start()
	defer srv.Close()
	resp, err := http.Post(srv.URL, "text/plain", strings.NewReader("longer than four bytes"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "longer than four bytes" {
		t.Errorf("answer %q: the handler was wrapped", b)
	}
}
