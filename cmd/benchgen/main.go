// Command benchgen times Wick's text generation at GPT-2 124M shapes
// (12 layers, 12 heads, 768 wide, vocab 50257, context 1024, random
// weights, bias on, dropout 0) on the CPU: batch 1, a -prompt-token
// prompt, -new new tokens drawn with temperature 1 and no top-k, as
// nanoGPT's generate does. It prints one line in the format of
// scripts/bench_generate_peer.py, its PyTorch twin:
//
//	wick threads=2 dtype=float32 tokens/s=21.3 ms/token=46.9 prefill_ms=410.2 ttft_ms=2100.5 cpu_ms/token=90.1
//
// tokens/s is -new divided by the whole Generate call (the prompt's
// forward pass included), ms/token its inverse; prefill_ms is the time
// of Generate with one new token for the -prompt-token prompt (the
// prompt's forward pass, the head and the draw); ttft_ms the same for a
// -ttft-token prompt (time to first token); cpu_ms/token the CPU time of
// all threads per generated token; allocs/token and alloc_kB/token the
// heap allocations (objects, bytes) of the whole call per generated token.
// Each is the median of -runs. -memprofile writes a profile of every
// allocation of the timed runs (go tool pprof -sample_index=alloc_objects);
// -trace an execution trace of them (go tool trace), which shows where
// the goroutines of a parallel product wait.
//
// With -bandwidth it measures instead the memory bandwidth of a Go copy
// over 1 GiB (copy(dst, src) split over GOMAXPROCS goroutines, counting
// the bytes read plus the bytes written, as STREAM's copy does; the best
// of 5) and prints the bound it puts on generation: the bytes of weights
// each token reads (every parameter but the position embedding, whose one
// row is negligible; the token embedding counted once, as the tied head)
// divided by that bandwidth; read_GB/s beside it is the rate of a
// read-only vector loop over 1 GiB (information only, the bound stays the
// copy's). Both buffers are on huge pages, as nn puts the weights
// (WICK_HUGEPAGES=0 turns both off):
//
//	bandwidth threads=2 dtype=float32 copy_GB/s=17.07 weights_MB/token=494.6 bound_ms/token=28.97 bound_tokens/s=34.52
//
// With -model=smollm2-135m it times instead an nn.Llama at SmolLM2-135M's
// shapes (hidden 576, 30 layers, 9 heads, 3 key/value heads, intermediate
// 1536, vocab 49152, tied embeddings, rope theta 100000, RMSNorm eps 1e-5,
// random weights) through nn.Generate (its key/value cache, EOS ignored),
// with -temperature (1 by default; 0 is greedy); the line starts
// "wick model=smollm2-135m". Its -bandwidth bound counts every parameter,
// the tied embedding once.
//
// With -load=DIR it only loads the model directory DIR with
// nn.LoadCausalLM (a Hugging Face hub layout; scripts/gen_load_model.py
// writes a random one at SmolLM2-135M's shapes) and prints the bytes of
// the loaded float32 parameters, the process's peak RSS (VmHWM) and their
// ratio:
//
//	load params_MB=538.1 peak_rss_MB=560.2 ratio=1.04 ms=850
//
// -dtype=bfloat16 (or float16) converts the weights of either model to
// that dtype (nn.ToDType; activations stay float32) before timing, and the
// -bandwidth bound then counts the weights' bytes in that dtype; the lines
// say dtype=.
//
// With -from=DIR it times instead the model of the hub-layout directory
// DIR (GPT-2 or Llama family), loaded with nn.LoadCausalLMWith in -dtype,
// through nn.Generate; scripts/gen_load_model.py writes random ones (with
// --model gpt2 at GPT-2 124M's shapes). A BF16 file loaded with
// -dtype=bfloat16 never holds a float32 copy of the weights, so the
// process's peak RSS is that of a bfloat16 model.
//
// scripts/bench_generate.sh runs it beside the peer.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/wickml/wick/internal/hugepage"
	"github.com/wickml/wick/internal/kernels"
	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
)

// profile starts the -cpuprofile after the model's construction and the
// warm-up, so that the profile holds the timed runs only.
var profile = func() {}

func main() {
	prompt := flag.Int("prompt", 64, "prompt tokens")
	newTok := flag.Int("new", 256, "tokens to generate")
	ttft := flag.Int("ttft", 1024, "prompt tokens for the time-to-first-token measurement (0: skip)")
	runs := flag.Int("runs", 1, "timed runs (medians are printed)")
	seed := flag.Uint64("seed", 1337, "random seed of the weights, prompt and draws")
	nLayer := flag.Int("n_layer", 12, "transformer blocks")
	nHead := flag.Int("n_head", 12, "attention heads")
	nEmbd := flag.Int("n_embd", 768, "embedding width")
	block := flag.Int("block_size", 1024, "context length")
	vocab := flag.Int("vocab_size", 50257, "vocabulary size")
	bandwidth := flag.Bool("bandwidth", false, "measure copy bandwidth over 1 GiB and print the bound it sets, instead of generating")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the timed runs to this file")
	memprofile := flag.String("memprofile", "", "write a profile of every allocation of the timed runs to this file (slows them)")
	modelName := flag.String("model", "gpt2", "model shape: gpt2 (the -n_* flags) or smollm2-135m")
	temperature := flag.Float64("temperature", 1, "sampling temperature of -model=smollm2-135m (0: greedy)")
	traceFile := flag.String("trace", "", "write an execution trace of the timed runs to this file (go tool trace)")
	load := flag.String("load", "", "only load this model directory with nn.LoadCausalLM and print its peak RSS")
	from := flag.String("from", "", "time the generation of this hub-layout model directory, loaded in -dtype, instead of a random model")
	flag.Parse()
	if *load != "" {
		if err := runLoad(*load); err != nil {
			fmt.Fprintln(os.Stderr, "benchgen:", err)
			os.Exit(1)
		}
		return
	}
	if *cpuprofile != "" {
		defer recordTimedRuns(*cpuprofile, pprof.StartCPUProfile, pprof.StopCPUProfile)()
	}
	if *traceFile != "" {
		defer recordTimedRuns(*traceFile, trace.Start, trace.Stop)()
	}
	if *memprofile != "" {
		start := profile
		profile = func() {
			start()
			runtime.MemProfileRate = 1
		}
		defer func() {
			runtime.GC() // the profile shows the allocations up to the last GC
			f, err := os.Create(*memprofile)
			if err == nil {
				err = pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, "benchgen:", err)
				os.Exit(1)
			}
		}()
	}
	var err error
	switch {
	case *from != "":
		err = runFrom(*from, *prompt, *newTok, *ttft, *runs, *seed, float32(*temperature))
	default:
		err = runModel(*modelName, *prompt, *newTok, *ttft, *runs, *seed, *nLayer, *nHead, *nEmbd, *block, *vocab, float32(*temperature), *bandwidth)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchgen:", err)
		os.Exit(1)
	}
}

// runModel times the random model -model names.
func runModel(modelName string, prompt, newTok, ttft, runs int, seed uint64, nLayer, nHead, nEmbd, block, vocab int, temperature float32, bandwidth bool) error {
	var err error
	switch modelName {
	case "gpt2":
		cfg := nn.GPTConfig{VocabSize: vocab, BlockSize: block, NLayer: nLayer, NHead: nHead, NEmbd: nEmbd, Bias: true}
		err = run(cfg, prompt, newTok, ttft, runs, seed, bandwidth)
	case "smollm2-135m":
		cfg := nn.LlamaConfig{ModelType: "llama", VocabSize: 49152, HiddenSize: 576, IntermediateSize: 1536,
			NumHiddenLayers: 30, NumAttentionHeads: 9, NumKeyValueHeads: 3, HeadDim: 64,
			MaxPositionEmbeddings: 2048, RMSNormEps: 1e-5, RopeTheta: 100000, TieWordEmbeddings: true}
		err = runLlama(cfg, modelName, prompt, newTok, ttft, runs, seed, temperature, bandwidth)
	default:
		err = fmt.Errorf("unknown -model %q (gpt2 or smollm2-135m)", modelName)
	}
	return err
}

func run(cfg nn.GPTConfig, prompt, newTok, ttft, runs int, seed uint64, bandwidth bool) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if prompt < 1 || newTok < 1 || runs < 1 || prompt+newTok > cfg.BlockSize || ttft > cfg.BlockSize || ttft < 0 {
		return fmt.Errorf("need 1 ≤ -prompt, 1 ≤ -new, -prompt + -new ≤ block_size %d, 0 ≤ -ttft ≤ block_size and -runs ≥ 1", cfg.BlockSize)
	}
	gen := tensor.NewGenerator(seed)
	model := nn.NewGPTWith(cfg, gen)
	model.Eval()
	itemSize, err := weightsToDType(model)
	if err != nil {
		return err
	}
	tokens := func(n int) *tensor.Tensor {
		ids := make([]int, n)
		for i := range ids {
			ids[i] = gen.IntN(cfg.VocabSize)
		}
		return tensor.FromInts(ids, 1, n)
	}
	if bandwidth {
		bytes := float64(itemSize) * float64(nn.NumParams(model)-cfg.BlockSize*cfg.NEmbd)
		bw := copyBandwidth(1 << 30)
		fmt.Printf("bandwidth threads=%d dtype=%s copy_GB/s=%.2f weights_MB/token=%.1f bound_ms/token=%.2f bound_tokens/s=%.2f read_GB/s=%.2f\n",
			runtime.GOMAXPROCS(0), *dtypeFlag, bw/1e9, bytes/1e6, bytes/bw*1e3, bw/bytes, readBandwidth(1<<30)/1e9)
		return nil
	}
	p := tokens(prompt)
	var allocs allocCount // of the last timeGen
	timeGen := func(idx *tensor.Tensor, n int) (wall, cpu float64) {
		g := tensor.NewGenerator(seed)
		a0 := mallocs()
		c0, t0 := cpuTime(), time.Now()
		model.GenerateWith(idx, n, 1, 0, g)
		wall, cpu = time.Since(t0).Seconds(), cpuTime()-c0
		allocs = mallocs().minus(a0)
		return wall, cpu
	}
	timeGen(p, 2) // warm-up: first-touch of the weights, the worker pool
	profile()
	var wall, cpu, prefill, first, objs, kb []float64
	for range runs {
		w, c := timeGen(p, newTok)
		wall, cpu = append(wall, w), append(cpu, c)
		objs, kb = append(objs, float64(allocs.objects)), append(kb, float64(allocs.bytes)/1024)
		w, _ = timeGen(p, 1)
		prefill = append(prefill, w)
		if ttft > 0 {
			w, _ = timeGen(tokens(ttft), 1)
			first = append(first, w)
		}
	}
	w := median(wall)
	fmt.Printf("wick threads=%d dtype=%s tokens/s=%.2f ms/token=%.2f prefill_ms=%.1f ttft_ms=%.1f cpu_ms/token=%.2f allocs/token=%.0f alloc_kB/token=%.1f\n",
		runtime.GOMAXPROCS(0), *dtypeFlag, float64(newTok)/w, w*1e3/float64(newTok), median(prefill)*1e3, median(first)*1e3, median(cpu)*1e3/float64(newTok),
		median(objs)/float64(newTok), median(kb)/float64(newTok))
	return nil
}

// runLlama is run for a Llama-family model, generating through
// nn.Generate.
func runLlama(cfg nn.LlamaConfig, name string, prompt, newTok, ttft, runs int, seed uint64, temperature float32, bandwidth bool) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	ctx := cfg.MaxPositionEmbeddings
	if prompt < 1 || newTok < 1 || runs < 1 || prompt+newTok > ctx || ttft > ctx || ttft < 0 || !(temperature >= 0) {
		return fmt.Errorf("need 1 ≤ -prompt, 1 ≤ -new, -prompt + -new ≤ context %d, 0 ≤ -ttft ≤ context, -runs ≥ 1 and -temperature ≥ 0", ctx)
	}
	gen := tensor.NewGenerator(seed)
	model := nn.NewLlamaWith(cfg, gen)
	model.Eval()
	itemSize, err := weightsToDType(model)
	if err != nil {
		return err
	}
	if bandwidth {
		// every parameter is read once per token; Parameters lists the
		// tied embedding once
		bytes := float64(itemSize) * float64(nn.NumParams(model))
		bw := copyBandwidth(1 << 30)
		fmt.Printf("bandwidth model=%s threads=%d dtype=%s copy_GB/s=%.2f weights_MB/token=%.1f bound_ms/token=%.2f bound_tokens/s=%.2f read_GB/s=%.2f\n",
			name, runtime.GOMAXPROCS(0), *dtypeFlag, bw/1e9, bytes/1e6, bytes/bw*1e3, bw/bytes, readBandwidth(1<<30)/1e9)
		return nil
	}
	return timeCausal(model, name, cfg.VocabSize, prompt, newTok, ttft, runs, gen, seed, temperature)
}

// runFrom loads the hub-layout model directory dir with nn.LoadCausalLMWith
// in -dtype (a BF16 file loaded as bfloat16 holds no float32 copy of the
// model at any point) and times its generation as runLlama does.
func runFrom(dir string, prompt, newTok, ttft, runs int, seed uint64, temperature float32) error {
	dt := map[string]tensor.DType{"float32": tensor.Float32, "bfloat16": tensor.BFloat16, "float16": tensor.Float16}
	d, ok := dt[*dtypeFlag]
	if !ok {
		return fmt.Errorf("-dtype=%s: want float32, bfloat16 or float16", *dtypeFlag)
	}
	m, err := nn.LoadCausalLMWith(dir, nn.LoadOptions{DType: d})
	if err != nil {
		return err
	}
	m.Eval()
	var vocab, ctx int
	switch c := m.(type) {
	case *nn.GPT:
		vocab, ctx = c.Config.VocabSize, c.Config.BlockSize
	case *nn.Llama:
		vocab, ctx = c.Config.VocabSize, c.Config.MaxPositionEmbeddings
	default:
		return fmt.Errorf("%s: a %s model, benchgen times gpt2 and Llama-family ones", dir, m.ModelType())
	}
	if prompt < 1 || newTok < 1 || runs < 1 || prompt+newTok > ctx || ttft > ctx || ttft < 0 || !(temperature >= 0) {
		return fmt.Errorf("need 1 ≤ -prompt, 1 ≤ -new, -prompt + -new ≤ context %d, 0 ≤ -ttft ≤ context, -runs ≥ 1 and -temperature ≥ 0", ctx)
	}
	return timeCausal(m, m.ModelType(), vocab, prompt, newTok, ttft, runs, tensor.NewGenerator(seed), seed, temperature)
}

// timeCausal times model's generation through nn.Generate and prints the
// line of runLlama.
func timeCausal(model nn.CausalLM, name string, vocab, prompt, newTok, ttft, runs int, gen *tensor.Generator, seed uint64, temperature float32) error {
	tokens := func(n int) *tensor.Tensor {
		ids := make([]int, n)
		for i := range ids {
			ids[i] = gen.IntN(vocab)
		}
		return tensor.FromInts(ids, 1, n)
	}
	p := tokens(prompt)
	var allocs allocCount // of the last timeGen
	timeGen := func(idx *tensor.Tensor, n int) (wall, cpu float64, err error) {
		opts := nn.GenerateOptions{MaxNewTokens: n, Temperature: temperature, IgnoreEOS: true, Generator: tensor.NewGenerator(seed)}
		a0 := mallocs()
		c0, t0 := cpuTime(), time.Now()
		out, err := nn.Generate(model, idx, opts)
		wall, cpu = time.Since(t0).Seconds(), cpuTime()-c0
		allocs = mallocs().minus(a0)
		if err == nil && out.Size(1) != idx.Size(1)+n {
			err = fmt.Errorf("generated %d tokens, want %d", out.Size(1)-idx.Size(1), n)
		}
		return wall, cpu, err
	}
	if _, _, err := timeGen(p, 2); err != nil { // warm-up
		return err
	}
	profile()
	var wall, cpu, prefill, first, objs, kb []float64
	for range runs {
		w, c, err := timeGen(p, newTok)
		if err != nil {
			return err
		}
		wall, cpu = append(wall, w), append(cpu, c)
		objs, kb = append(objs, float64(allocs.objects)), append(kb, float64(allocs.bytes)/1024)
		w, _, _ = timeGen(p, 1)
		prefill = append(prefill, w)
		if ttft > 0 {
			w, _, _ = timeGen(tokens(ttft), 1)
			first = append(first, w)
		}
	}
	w := median(wall)
	fmt.Printf("wick model=%s threads=%d dtype=%s tokens/s=%.2f ms/token=%.2f prefill_ms=%.1f ttft_ms=%.1f cpu_ms/token=%.2f allocs/token=%.0f alloc_kB/token=%.1f\n",
		name, runtime.GOMAXPROCS(0), *dtypeFlag, float64(newTok)/w, w*1e3/float64(newTok), median(prefill)*1e3, median(first)*1e3, median(cpu)*1e3/float64(newTok),
		median(objs)/float64(newTok), median(kb)/float64(newTok))
	return nil
}

// recordTimedRuns creates the file at path and makes profile also call
// start on it (a CPU profile, an execution trace) when the timed runs
// begin; it returns what main defers: stop (a no-op unless start ran),
// then the file's close. Any error ends the program with one line.
func recordTimedRuns(path string, start func(io.Writer) error, stop func()) (done func()) {
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchgen:", err)
		os.Exit(1)
	}
	prev := profile
	profile = func() {
		prev()
		if err := start(f); err != nil {
			fmt.Fprintln(os.Stderr, "benchgen:", err)
			os.Exit(1)
		}
	}
	return func() {
		stop()
		f.Close()
	}
}

// runLoad loads dir and prints the parameters' bytes against the peak RSS.
func runLoad(dir string) error {
	t0 := time.Now()
	m, err := nn.LoadCausalLM(dir)
	if err != nil {
		return err
	}
	ms := time.Since(t0).Milliseconds()
	bytes := 4 * float64(nn.NumParams(m))
	rss, err := peakRSS()
	if err != nil {
		return err
	}
	fmt.Printf("load params_MB=%.1f peak_rss_MB=%.1f ratio=%.3f ms=%d\n", bytes/1e6, rss/1e6, rss/bytes, ms)
	return nil
}

// peakRSS returns VmHWM of /proc/self/status in bytes.
func peakRSS() (float64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb float64
			if _, err := fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(v), " kB"), &kb); err != nil {
				return 0, err
			}
			return kb * 1024, nil
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/self/status")
}

// copyBandwidth returns the best of 5 runs of copying n bytes between two
// buffers on GOMAXPROCS goroutines, in bytes moved (read + written) per
// second.
func copyBandwidth(n int) float64 {
	src, dst := make([]byte, n), make([]byte, n)
	adviseHuge(src)
	adviseHuge(dst)
	for i := range src {
		src[i] = byte(i)
	}
	copy(dst, src) // fault every page in
	k := runtime.GOMAXPROCS(0)
	best := 0.0
	for range 5 {
		var wg sync.WaitGroup
		t0 := time.Now()
		for i := range k {
			lo, hi := i*n/k, (i+1)*n/k
			wg.Go(func() { copy(dst[lo:hi], src[lo:hi]) })
		}
		wg.Wait()
		best = max(best, 2*float64(n)/time.Since(t0).Seconds())
	}
	return best
}

// readBandwidth returns the best of 5 runs of reading n bytes of float32s
// on GOMAXPROCS goroutines (kernels.Max, one vector max per 64 bytes on
// AVX-512, so the loop waits on memory alone), in bytes read per second:
// the rate a product that only reads its weights could stream at, beside
// the bound's copy rate.
func readBandwidth(n int) float64 {
	x := make([]float32, n/4)
	adviseHuge(x)
	for i := range x {
		x[i] = float32(i % 1000)
	}
	k := runtime.GOMAXPROCS(0)
	best, sink := 0.0, make([]float32, k)
	for range 5 {
		var wg sync.WaitGroup
		t0 := time.Now()
		for i := range k {
			lo, hi := i*len(x)/k, (i+1)*len(x)/k
			wg.Go(func() { sink[i] = kernels.Max(x[lo:hi]) })
		}
		wg.Wait()
		best = max(best, float64(n)/time.Since(t0).Seconds())
	}
	return best
}

// adviseHuge puts b on huge pages as nn puts a model's weights
// (internal/hugepage; not with WICK_HUGEPAGES=0), so that the bound is
// measured over pages of the same size as the weights the products read.
func adviseHuge[E any](b []E) {
	var e E
	hugepage.Advise(uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b))*unsafe.Sizeof(e))
	runtime.KeepAlive(b)
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// allocCount is a count of heap allocations: objects and their bytes.
type allocCount struct{ objects, bytes uint64 }

// mallocs returns the heap allocations of the process so far.
func mallocs() allocCount {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return allocCount{ms.Mallocs, ms.TotalAlloc}
}

func (a allocCount) minus(b allocCount) allocCount {
	return allocCount{a.objects - b.objects, a.bytes - b.bytes}
}

// cpuTime returns the CPU seconds (user and system, all threads) the
// process has used so far.
func cpuTime() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
