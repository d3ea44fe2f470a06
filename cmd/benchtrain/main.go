// Command benchtrain times Wick's training step on nanoGPT's CPU recipe:
// a character-level GPT (n_layer 4, n_head 4, n_embd 128, block 64,
// batch 12, bias off, dropout 0) trained on random windows of a text file
// with AdamW (lr 1e-3, betas (0.9, 0.99), weight decay 0.1 on ≥2-D
// weights) and gradient clipping at 1. Each iteration is forward,
// backward, clip, step, zero-grad, as in cmd/train.
//
// After -warmup iterations it times -iters more and prints one line in the
// format of scripts/bench_train_peer.py, its PyTorch twin:
//
//	wick threads=2 ms/iter=40.10 tokens/s=19152 loss=2.5123 cpu_ms/iter=75.3 cpu_min_ms=73.9 gc=3.1% alloc=60.2MB/iter
//
// cpu_ms is the CPU time of all threads per iteration (a measure of the
// work done that other load on the machine disturbs less than the wall
// time), cpu_min_ms the CPU time of the fastest iteration (the least
// disturbed: every iteration does the same work), gc the share of CPU time
// the garbage collector used and alloc the bytes allocated per iteration.
//
// scripts/bench_train.sh runs both side by side.
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/wickml/wick/internal/data"
	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/optim"
	"github.com/wickml/wick/tensor"
	"github.com/wickml/wick/tokenizer"
)

func main() {
	path := flag.String("data", "data/shakespeare_char/input.txt", "text file to train on (the default is tiny Shakespeare, shipped in the repository)")
	warmup := flag.Int("warmup", 10, "untimed iterations first")
	iters := flag.Int("iters", 50, "timed iterations")
	seed := flag.Uint64("seed", 1337, "random seed")
	nLayer := flag.Int("n_layer", 4, "transformer blocks")
	nHead := flag.Int("n_head", 4, "attention heads")
	nEmbd := flag.Int("n_embd", 128, "embedding width")
	block := flag.Int("block_size", 64, "context length")
	batch := flag.Int("batch_size", 12, "sequences per batch")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the timed iterations to this file")
	memprofile := flag.String("memprofile", "", "write a heap profile (bytes allocated during the timed iterations) to this file")
	gogc := flag.Int("gogc", 0, "garbage-collector target percentage (0: the runtime's default or $GOGC)")
	dtype := flag.String("dtype", "float32", "float32, or bfloat16: the forward pass and the loss inside tensor.Autocast(tensor.BFloat16, …), as train --dtype=bfloat16")
	flag.Parse()
	switch *dtype {
	case "float32":
	case "bfloat16":
		autocast = tensor.BFloat16
	default:
		fmt.Fprintf(os.Stderr, "benchtrain: -dtype=%s is not float32 or bfloat16\n", *dtype)
		os.Exit(2)
	}
	if *gogc != 0 {
		debug.SetGCPercent(*gogc)
	}
	if err := run(*path, *warmup, *iters, *seed, nn.GPTConfig{BlockSize: *block, NLayer: *nLayer, NHead: *nHead, NEmbd: *nEmbd}, *batch, *cpuprofile, *memprofile); err != nil {
		fmt.Fprintln(os.Stderr, "benchtrain:", err)
		os.Exit(1)
	}
}

// autocast is -dtype's: Float32 (off) or BFloat16.
var autocast = tensor.Float32

func run(path string, warmup, iters int, seed uint64, cfg nn.GPTConfig, batch int, cpuprofile, memprofile string) error {
	text, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	tok := tokenizer.NewChar(text)
	ids, err := data.Encode(context.Background(), tok, text)
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	cfg.VocabSize = tok.VocabSize()
	if err := cfg.Validate(); err != nil {
		return err
	}
	tensor.ManualSeed(seed)
	model := nn.NewGPT(cfg)
	params := model.Parameters()
	opt := optim.NewAdamWGroups(optim.DecayGroups(params, 0.1), optim.AdamWConfig{LR: 1e-3, Beta1: 0.9, Beta2: 0.99})
	sampler := data.NewSampler(ids, batch, cfg.BlockSize, tensor.NewGenerator(seed))

	step := func() float32 {
		x, y := sampler.Next()
		var loss *tensor.Tensor
		tensor.Autocast(autocast, func() {
			loss = model.Loss(tensor.FromInts(x, batch, cfg.BlockSize), tensor.FromInts(y, batch, cfg.BlockSize))
		})
		loss.Backward()
		optim.ClipGradNorm(params, 1)
		opt.Step()
		opt.ZeroGrad()
		return loss.Item()
	}
	for range warmup {
		step()
	}
	if cpuprofile != "" {
		f, err := os.Create(cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if memprofile != "" {
		// count only the timed iterations' allocations
		runtime.MemProfileRate = 64 << 10
		runtime.GC()
		defer func() {
			runtime.GC()
			f, err := os.Create(memprofile)
			if err == nil {
				err = pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, "benchtrain: memprofile:", err)
			}
		}()
	}
	gc0 := gcCPU()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	cpu0 := cpuTime()
	t0 := time.Now()
	var loss float32
	cpuMin := math.Inf(1)
	for range iters {
		c := cpuTime()
		loss = step()
		cpuMin = min(cpuMin, cpuTime()-c)
	}
	dt := time.Since(t0).Seconds() / float64(iters)
	cpuMS := (cpuTime() - cpu0) * 1e3 / float64(iters)
	runtime.ReadMemStats(&ms1)
	allocMB := float64(ms1.TotalAlloc-ms0.TotalAlloc) / float64(iters) / (1 << 20)
	gcFrac := (gcCPU() - gc0) / (time.Since(t0).Seconds() * float64(runtime.GOMAXPROCS(0)))
	fmt.Printf("wick threads=%d ms/iter=%.2f tokens/s=%.0f loss=%.4f cpu_ms/iter=%.2f cpu_min_ms=%.2f gc=%.1f%% alloc=%.1fMB/iter\n",
		runtime.GOMAXPROCS(0), dt*1e3, float64(batch*cfg.BlockSize)/dt, loss, cpuMS, cpuMin*1e3, 100*gcFrac, allocMB)
	return nil
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

// gcCPU returns the CPU seconds the garbage collector has used so far.
func gcCPU() float64 {
	s := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}}
	metrics.Read(s)
	return s[0].Value.Float64()
}
