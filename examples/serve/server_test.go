package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/wickml/wick/internal/httplimit"
	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
	"github.com/wickml/wick/tokenizer"
)

// writeCheckpoint writes a small untrained model and its character
// tokenizer in train's checkpoint format, with an optimizer tensor as train
// writes them, and returns the path.
func writeCheckpoint(t *testing.T) string {
	t.Helper()
	tok := tokenizer.NewChar([]byte("abcdefghijklmnopqrstuvwxyz ,.:\n"))
	cfg := nn.GPTConfig{VocabSize: tok.VocabSize(), BlockSize: 16, NLayer: 2, NHead: 2, NEmbd: 16, Bias: true}
	model := nn.NewGPTWith(cfg, tensor.NewGenerator(5))
	tj, err := tok.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	meta := fmt.Sprintf(`{"iter": 3, "model_args": {"VocabSize": %d, "BlockSize": 16, "NLayer": 2, "NHead": 2, "NEmbd": 16, "Bias": true}, "tokenizer": %s}`, cfg.VocabSize, tj)
	sd := nn.StateDictOf(model)
	sd["optimizer.state.0.exp_avg"] = tensor.Zeros(3)
	path := filepath.Join(t.TempDir(), "ckpt.safetensors")
	if err := nn.SaveStateDictFile(path, sd, map[string]string{nn.MetaFormat: nn.TrainCheckpointFormat, nn.MetaTrain: meta}); err != nil {
		t.Fatal(err)
	}
	return path
}

// start serves the checkpoint on 127.0.0.1 through serve, as main does,
// with the default limits, and returns the base URL; the server stops at
// the end of the test.
func start(t *testing.T) string {
	t.Helper()
	ck, err := nn.LoadCheckpoint(writeCheckpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	base, _ := startWith(t, newServer(ck.Model, ck.Tokenizer, 200), httplimit.Default())
	return base
}

// startWith serves s within lim on 127.0.0.1 and returns the base URL and
// the server's log; the server stops at the end of the test.
func startWith(t *testing.T, s *server, lim httplimit.Limits) (string, *syncBuffer) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- serve(ctx, ln, s, lim, log.New(logs, "serve: ", 0)) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve after shutdown: %v", err)
		}
	})
	return "http://" + ln.Addr().String(), logs
}

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

func get(base string, q url.Values) (int, string, error) {
	resp, err := http.Get(base + "/generate?" + q.Encode())
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// TestConcurrentRequestsMatchAlone sends 64 requests at once, with their own
// seeds, prompts and settings, and checks that each answer equals the answer
// to the same request served alone.
func TestConcurrentRequestsMatchAlone(t *testing.T) {
	base := start(t)
	prompts := []string{"a", "the cat", "to be, or", "\n"}
	reqs := make([]url.Values, 64)
	for i := range reqs {
		reqs[i] = url.Values{
			"prompt":         {prompts[i%len(prompts)]},
			"seed":           {fmt.Sprint(1000 + i)},
			"max_new_tokens": {fmt.Sprint(10 + i%3*10)}, // past the block size too
			"top_k":          {fmt.Sprint(i % 5 * 3)},
			"temperature":    {fmt.Sprint(0.5 + float64(i%4)*0.25)},
		}
	}
	together := make([]string, len(reqs))
	var wg sync.WaitGroup
	errs := make(chan error, len(reqs))
	for i, q := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, body, err := get(base, q)
			if err == nil && code != http.StatusOK {
				err = fmt.Errorf("request %d: status %d: %s", i, code, body)
			}
			if err != nil {
				errs <- err
			}
			together[i] = body
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	distinct := map[string]bool{}
	for i, q := range reqs {
		_, alone, err := get(base, q)
		if err != nil {
			t.Fatal(err)
		}
		if together[i] != alone {
			t.Errorf("request %d (%v): served with 63 others:\n%s\nserved alone:\n%s", i, q, together[i], alone)
		}
		distinct[alone] = true
	}
	if len(distinct) < len(reqs)/2 {
		t.Errorf("only %d distinct answers to %d requests with different seeds", len(distinct), len(reqs))
	}
}

// TestBadRequests: parameters out of range get status 400 and a JSON error
// naming the parameter.
func TestBadRequests(t *testing.T) {
	base := start(t)
	for _, c := range []struct {
		q    url.Values
		want string
	}{
		{url.Values{"max_new_tokens": {"100000"}}, "max_new_tokens"},
		{url.Values{"max_new_tokens": {"x"}}, "max_new_tokens"},
		{url.Values{"temperature": {"1e-300"}}, "temperature"},
		{url.Values{"temperature": {"1e-45"}}, "temperature"},
		{url.Values{"temperature": {"-1"}}, "temperature"},
		{url.Values{"temperature": {"NaN"}}, "temperature"},
		{url.Values{"prompt": {strings.Repeat("a", 17)}}, "context of 16"},
		{url.Values{"top_k": {"-1"}}, "top_k"},
		{url.Values{"seed": {"-3"}}, "seed"},
		{url.Values{"prompt": {"UPPER"}}, "prompt"},
		{url.Values{"prompt": {""}}, "prompt"},
	} {
		code, body, err := get(base, c.q)
		if err != nil {
			t.Fatal(err)
		}
		if code != http.StatusBadRequest || !strings.Contains(body, `"error"`) || !strings.Contains(body, c.want) {
			t.Errorf("%v: status %d, body %s; want 400 and an error naming %s", c.q, code, body, c.want)
		}
	}
}

// TestLoadCheckpointErrors: files that are not train checkpoints are
// rejected with an error naming the file (nn.LoadCheckpoint, which main
// calls).
func TestLoadCheckpointErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "none.safetensors")
	if _, err := nn.LoadCheckpoint(missing); err == nil || !strings.Contains(err.Error(), "none.safetensors") {
		t.Errorf("missing file: err = %v, want one naming the file", err)
	}
	plain := filepath.Join(dir, "plain.safetensors")
	if err := nn.SaveFile(plain, nn.NewLinear(2, 2, true)); err != nil {
		t.Fatal(err)
	}
	if _, err := nn.LoadCheckpoint(plain); err == nil || !strings.Contains(err.Error(), "not written by train") {
		t.Errorf("a safetensors file without train's metadata: err = %v", err)
	}
}

// TestGreedy: temperature=0 is greedy decoding, the tokens of top_k=1,
// whatever the seed.
func TestGreedy(t *testing.T) {
	base := start(t)
	tokens := func(q url.Values) string {
		t.Helper()
		code, body, err := get(base, q)
		if err != nil || code != http.StatusOK {
			t.Fatalf("%v: status %d, %s (%v)", q, code, body, err)
		}
		var r response
		if err := json.Unmarshal([]byte(body), &r); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(r.Tokens)
	}
	want := tokens(url.Values{"prompt": {"the cat"}, "top_k": {"1"}, "temperature": {"1"}, "seed": {"1"}, "max_new_tokens": {"30"}})
	for _, seed := range []string{"1", "2"} {
		if got := tokens(url.Values{"prompt": {"the cat"}, "temperature": {"0"}, "seed": {seed}, "max_new_tokens": {"30"}}); got != want {
			t.Errorf("temperature=0 seed=%s: tokens %s, want top_k=1's %s", seed, got, want)
		}
	}
}
