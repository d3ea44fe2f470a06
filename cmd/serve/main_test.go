package main

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wickml/wick/chat"
	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
	"github.com/wickml/wick/tokenizer"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// serveBinary builds the command once per test run.
func serveBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "wick-serve-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "serve")
		if out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// testChars is the character tokenizer of the test checkpoints.
var testChars = tokenizer.NewChar([]byte("abcdefghijklmnopqrstuvwxyz ,.:\n"))

// writeCheckpoint writes a random GPT (n_embd, n_layer, context) and the
// character tokenizer in train's checkpoint format, with an optimizer
// tensor as train writes them, in dir, and returns the file's path.
func writeCheckpoint(t *testing.T, dir string, embd, layers, block int) string {
	t.Helper()
	return writeCheckpointWith(t, dir, embd, layers, block, nil)
}

// writeCheckpointWith is writeCheckpoint with edit applied to the model
// before it is written.
func writeCheckpointWith(t *testing.T, dir string, embd, layers, block int, edit func(*nn.GPT)) string {
	t.Helper()
	cfg := nn.GPTConfig{VocabSize: testChars.VocabSize(), BlockSize: block, NLayer: layers, NHead: 2, NEmbd: embd, Bias: true}
	model := nn.NewGPTWith(cfg, tensor.NewGenerator(5))
	if edit != nil {
		edit(model)
	}
	tj, err := testChars.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	meta := fmt.Sprintf(`{"iter": 3, "model_args": {"VocabSize": %d, "BlockSize": %d, "NLayer": %d, "NHead": 2, "NEmbd": %d, "Bias": true}, "tokenizer": %s}`,
		cfg.VocabSize, block, layers, embd, tj)
	sd := nn.StateDictOf(model)
	sd["optimizer.state.0.exp_avg"] = tensor.Zeros(3)
	path := filepath.Join(dir, "ckpt.safetensors")
	if err := nn.SaveStateDictFile(path, sd, map[string]string{nn.MetaFormat: nn.TrainCheckpointFormat, nn.MetaTrain: meta}); err != nil {
		t.Fatal(err)
	}
	return path
}

// server is a started serve binary.
type server struct {
	cmd    *exec.Cmd
	base   string
	stdout *lockedBuffer
	stderr *lockedBuffer
	done   chan error
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

var listening = regexp.MustCompile(`on http://([^/\s]+)/v1\n`)

// start runs the binary with args on 127.0.0.1:0 and waits until it says
// where it listens; it is killed at the end of the test if still running.
func start(t *testing.T, env []string, args ...string) *server {
	t.Helper()
	s := &server{stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, done: make(chan error, 1)}
	s.cmd = exec.Command(serveBinary(t), append([]string{"--addr=127.0.0.1:0"}, args...)...)
	s.cmd.Env = append(os.Environ(), env...)
	s.cmd.Stdout, s.cmd.Stderr = s.stdout, s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.done <- s.cmd.Wait() }()
	t.Cleanup(func() {
		s.cmd.Process.Kill()
		<-s.done
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		if m := listening.FindStringSubmatch(s.stdout.String()); m != nil {
			s.base = "http://" + m[1]
			return s
		}
		select {
		case err := <-s.done:
			s.done <- err
			t.Fatalf("serve exited (%v) before listening:\n%s%s", err, s.stdout, s.stderr)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not listen within 60 s:\n%s%s", s.stdout, s.stderr)
		}
	}
}

// wait waits for the process to exit and returns its status.
func (s *server) wait(t *testing.T) int {
	t.Helper()
	select {
	case err := <-s.done:
		s.done <- err
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(60 * time.Second):
		t.Fatalf("serve did not exit within 60 s:\n%s%s", s.stdout, s.stderr)
		return -1
	}
}

func post(url, body string, header ...string) (int, string, error) {
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// TestStartupErrors: each mistake at start-up is one line on stderr and
// exit status 1, never a stack trace.
func TestStartupErrors(t *testing.T) {
	dir := t.TempDir()
	ckpt := writeCheckpoint(t, dir, 16, 1, 16)
	corrupt := filepath.Join(dir, "corrupt.safetensors")
	os.WriteFile(corrupt, []byte("not a checkpoint at all, but long enough to have a header"), 0o644)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "--model is required"},
		{[]string{"--model=" + ckpt, "--dtype=int8"}, "--dtype=int8 is not supported (want float32, bfloat16 or float16)"},
		{[]string{"--model=" + filepath.Join(dir, "none")}, "none"},
		{[]string{"--model=" + corrupt}, "corrupt.safetensors"},
		{[]string{"--model=" + ckpt, "--kv_cache_memory=lots"}, "kv_cache_memory"},
		{[]string{"--model=" + ckpt, "--max_batch=0"}, "--max_batch=0"},
		{[]string{"--model=" + ckpt, "--write_timeout=0s"}, "--write_timeout"},
		{[]string{"--model=" + ckpt, "--device=cuda"}, "--device=cuda"},
		{[]string{"--model=" + ckpt, "--chat_template=" + filepath.Join(dir, "none.jinja")}, "--chat_template"},
		{[]string{"--model=" + ckpt, "--addr=" + busy.Addr().String()}, "--addr=" + busy.Addr().String()},
		{[]string{"--model=" + ckpt, "extra"}, `unexpected argument "extra"`},
		{[]string{"--modle=x"}, "modle"},
		{[]string{"--model=" + t.TempDir()}, "neither ckpt.safetensors (a train checkpoint) nor config.json"},
		{[]string{"--model=" + dir, "--tokenizer_dir=" + dir}, "a train checkpoint, which holds its own tokenizer"},
	} {
		cmd := exec.Command(serveBinary(t), c.args...)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := -1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		msg := stderr.String()
		if code != 1 || strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "serve: ") || !strings.Contains(msg, c.want) || strings.Contains(msg, "goroutine") {
			t.Errorf("serve %v: exit %d, stderr %q; want status 1 and one line with %q", c.args, code, msg, c.want)
		}
	}
	// -h prints the usage and exits 0
	out, err := exec.Command(serveBinary(t), "-h").Output()
	if err != nil || !strings.Contains(string(out), "--model=PATH") || !strings.Contains(string(out), "kv_cache_memory") {
		t.Errorf("serve -h: %v\n%s", err, out)
	}
}

// TestServeCheckpoint serves a train checkpoint (given as its out_dir)
// with a chat template from a file and an API key from the environment:
// models, completions and chat answer, a request without the key gets
// 401, and SIGTERM ends it with status 0.
func TestServeCheckpoint(t *testing.T) {
	dir := t.TempDir()
	writeCheckpoint(t, dir, 16, 2, 64)
	tmpl := filepath.Join(dir, "chat.jinja")
	os.WriteFile(tmpl, []byte("{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}{% if add_generation_prompt %}assistant:{% endif %}"), 0o644)
	s := start(t, []string{"WICK_API_KEY=sk-test"}, "--model="+dir, "--chat_template="+tmpl, "--served_model_name=tiny", "--max_tokens=40")
	key := []string{"Authorization", "Bearer sk-test"}
	req, _ := http.NewRequest("GET", s.base+"/v1/models", nil)
	req.Header.Set(key[0], key[1])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"id":"tiny"`) {
		t.Errorf("/v1/models: %d %s", resp.StatusCode, b)
	}
	code, body, err := post(s.base+"/v1/completions", `{"model": "tiny", "prompt": "to be", "max_tokens": 10, "temperature": 0}`, key...)
	if err != nil || code != 200 || !strings.Contains(body, `"completion_tokens":10`) {
		t.Errorf("completion: %d %s %v", code, body, err)
	}
	code, body, err = post(s.base+"/v1/chat/completions", `{"messages": [{"role": "user", "content": "hi"}], "max_tokens": 5, "stream": true}`, key...)
	if err != nil || code != 200 || !strings.HasPrefix(body, `data: {`) || !strings.HasSuffix(body, "data: [DONE]\n\n") || !strings.Contains(body, `"role":"assistant"`) {
		t.Errorf("chat: %d %s %v", code, body, err)
	}
	if code, body, _ := post(s.base+"/v1/completions", `{"prompt": "a"}`); code != 401 {
		t.Errorf("without the key: %d %s", code, body)
	}
	if code, body, _ := post(s.base+"/v1/completions", `{"prompt": "a", "max_tokens": 41}`, key...); code != 400 || !strings.Contains(body, "max_tokens=41: want 1 to 40") {
		t.Errorf("past --max_tokens: %d %s", code, body)
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	if code := s.wait(t); code != 0 {
		t.Errorf("exit status %d after SIGTERM:\n%s%s", code, s.stdout, s.stderr)
	}
}

// TestServeNaNCheckpoint: a checkpoint with NaN weights is refused at
// start with one line naming the tensor and the element (nn.LoadCheckpoint
// checks the weights as it reads them, issue #31), exit status 1.
func TestServeNaNCheckpoint(t *testing.T) {
	dir := t.TempDir()
	writeCheckpointWith(t, dir, 16, 1, 32, func(m *nn.GPT) {
		m.Wte.Weight.Detach().CopyFrom(tensor.Full(float32(math.NaN()), m.Wte.Weight.Shape()...))
	})
	cmd := exec.Command(serveBinary(t), "--addr=127.0.0.1:0", "--model="+dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	code := -1
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	msg := stderr.String()
	if want := `tensor "transformer.wte.weight": non-finite value: element 0 is NaN`; code != 1 || strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "serve: ") || !strings.Contains(msg, want) {
		t.Errorf("exit %d, stderr %q; want status 1 and one line with %q", code, msg, want)
	}
}

// TestSIGTERMUnderLoad: SIGTERM while 24 requests are in flight, whole
// and streamed, answers every one of them in full, then exits 0; the
// listener is closed at once.
func TestSIGTERMUnderLoad(t *testing.T) {
	dir := t.TempDir()
	// one batch of all 24: none ends before the others, so that they
	// are all in flight from the first step to the last
	writeCheckpoint(t, dir, 128, 4, 256)
	s := start(t, nil, "--model="+dir, "--max_batch=24", "--max_waiting=32")
	const n = 24
	type result struct {
		code int
		body string
		err  error
	}
	results := make(chan result, n)
	for i := range n {
		go func() {
			code, body, err := post(s.base+"/v1/completions", fmt.Sprintf(`{"prompt": "the ", "max_tokens": 200, "seed": %d, "stream": %v}`, i, i%2 == 0))
			results <- result{code, body, err}
		}()
	}
	waitInFlight(t, s, n)
	s.cmd.Process.Signal(syscall.SIGTERM)
	for range n {
		r := <-results
		whole := strings.Contains(r.body, `"finish_reason":"length"`) && strings.Contains(r.body, `"completion_tokens":200`)
		streamed := strings.HasSuffix(r.body, "data: [DONE]\n\n") && strings.Contains(r.body, `"finish_reason":"length"`)
		if r.err != nil || r.code != 200 || !whole && !streamed {
			t.Errorf("in flight at SIGTERM: %d %v %.300s", r.code, r.err, r.body)
		}
	}
	if code := s.wait(t); code != 0 {
		t.Errorf("exit status %d after SIGTERM:\n%s%s", code, s.stdout, s.stderr)
	}
	if !strings.Contains(s.stdout.String(), "serve: stopped") || strings.Contains(s.stderr.String(), "panic") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", s.stdout, s.stderr)
	}
	if _, _, err := post(s.base+"/v1/completions", `{"prompt": "a"}`); err == nil {
		t.Errorf("a request after the exit was answered")
	}
}

// TestSecondSignal: a second SIGTERM while the first waits for the
// requests in flight cuts them off: exit status 1 and one line saying so.
func TestSecondSignal(t *testing.T) {
	dir := t.TempDir()
	writeCheckpoint(t, dir, 128, 4, 256)
	s := start(t, nil, "--model="+dir, "--max_batch=8")
	done := make(chan struct{})
	for i := range 8 {
		go func() {
			post(s.base+"/v1/completions", fmt.Sprintf(`{"prompt": "the ", "max_tokens": 250, "seed": %d}`, i))
			done <- struct{}{}
		}()
	}
	waitInFlight(t, s, 8)
	s.cmd.Process.Signal(syscall.SIGTERM)
	for !strings.Contains(s.stdout.String(), "serve: stopping") {
		time.Sleep(time.Millisecond)
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	if code := s.wait(t); code != 1 || s.stderr.String() != "serve: a second signal cut off the requests in flight\n" {
		t.Errorf("exit status %d, stderr %q", code, s.stderr)
	}
	for range 8 {
		<-done
	}
}

// waitInFlight waits until /metrics counts n requests in flight.
func waitInFlight(t *testing.T, s *server, n int) {
	t.Helper()
	inFlight := regexp.MustCompile(`(?m)^wick_requests_in_flight (\d+)$`)
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(s.base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if m := inFlight.FindSubmatch(b); m != nil && string(m[1]) == fmt.Sprint(n) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the %d requests were not in flight together:\n%s", n, b)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestServeHFDir serves a Hugging Face directory: a small random Qwen3
// with Qwen3's tokenizer.json and tokenizer_config.json (its chat
// template). A greedy chat answer is the library's greedy generation of
// the rendered conversation, stopped at the template's end of turn.
func TestServeHFDir(t *testing.T) {
	dir := t.TempDir()
	gunzip(t, "../../testdata/tokenizer/hf/qwen3.json.gz", filepath.Join(dir, "tokenizer.json"))
	copyFile(t, "../../testdata/tokenizer/hf/qwen3_tokenizer_config.json", filepath.Join(dir, "tokenizer_config.json"))
	cfg := nn.LlamaConfig{ModelType: "qwen3", VocabSize: 151936, HiddenSize: 16, IntermediateSize: 32, NumHiddenLayers: 1,
		NumAttentionHeads: 2, NumKeyValueHeads: 1, HeadDim: 8, MaxPositionEmbeddings: 128, RMSNormEps: 1e-6, RopeTheta: 1e6,
		QKNorm: true, TieWordEmbeddings: true, EOSTokenIDs: []int{151645}}
	if err := nn.NewLlamaWith(cfg, tensor.NewGenerator(3)).SavePretrained(dir); err != nil {
		t.Fatal(err)
	}
	s := start(t, nil, "--model="+dir, "--served_model_name=qwen-tiny")
	if !strings.Contains(s.stdout.String(), "Hugging Face model, qwen3") {
		t.Errorf("start-up line: %s", s.stdout)
	}
	code, body, err := post(s.base+"/v1/chat/completions", `{"model": "qwen-tiny", "messages": [{"role": "user", "content": "Hello!"}], "max_tokens": 24, "temperature": 0}`)
	if err != nil || code != 200 {
		t.Fatalf("chat: %d %s %v", code, body, err)
	}
	var got struct {
		Choices []struct {
			Message struct{ Content string }
		}
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		}
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	// the same in the library
	ccfg, err := chat.LoadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := ccfg.Template("")
	if err != nil {
		t.Fatal(err)
	}
	rendered, err := tmpl.Render([]chat.Message{{Role: "user", Content: "Hello!"}}, chat.Options{AddGenerationPrompt: true})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.LoadPretrained(dir)
	if err != nil {
		t.Fatal(err)
	}
	prompt := tok.Encode(rendered)
	lm, err := nn.LoadCausalLM(dir)
	if err != nil {
		t.Fatal(err)
	}
	lm.Eval()
	out, err := nn.Generate(lm, tensor.FromInts(prompt, 1, len(prompt)), nn.GenerateOptions{MaxNewTokens: 24, StopTokenIDs: ccfg.StopTokenIDs})
	if err != nil {
		t.Fatal(err)
	}
	gen := out.Ints()[len(prompt):]
	for i, id := range gen {
		if id == 151645 || id == 151643 {
			gen = gen[:i]
			break
		}
	}
	if want := tok.Decode(gen); got.Choices[0].Message.Content != want || got.Usage.PromptTokens != len(prompt) {
		t.Errorf("chat answer %q (%d prompt tokens), want the library's %q (%d)", got.Choices[0].Message.Content, got.Usage.PromptTokens, want, len(prompt))
	}
}

func gunzip(t *testing.T, src, dst string) {
	t.Helper()
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if _, err := io.Copy(out, bufio.NewReader(zr)); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
