// Command benchlora times one training step of a Llama-family model with
// random weights (SmolLM2-135M's shape by default) and measures the
// memory it takes: a full fine-tune, or LoRA adapters on a frozen model
// (-lora_rank), with or without activation checkpointing (-ckpt). Each
// step is forward, backward, clip, AdamW step and zero-grad on random
// tokens, as in cmd/train.
//
// It measures on a first step the live heap that the forward pass leaves
// for backward (the activations, after two collections), then takes
// -warmup untimed steps and times -steps more, and prints one line:
//
//	benchlora lora_rank=8 ckpt=false batch=4 block=512 ms/step=8123 min_ms=8011 activations=5.12GiB peak_rss=9.8GiB trainable=1.4M
//
// -memprofile writes a heap profile of what the first forward pass left
// live, by the allocating call site (go tool pprof -sample_index=inuse_space
// -top), to see which operations keep what for the backward pass.
//
// peak_rss is the process's VmHWM from /proc/self/status; run it under
// /usr/bin/time -v for the same number from outside.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/optim"
	"github.com/wickml/wick/tensor"
)

func main() {
	hidden := flag.Int("hidden", 576, "hidden_size")
	layers := flag.Int("layers", 30, "num_hidden_layers")
	heads := flag.Int("heads", 9, "num_attention_heads")
	kv := flag.Int("kv", 3, "num_key_value_heads")
	inter := flag.Int("inter", 1536, "intermediate_size")
	vocab := flag.Int("vocab", 49152, "vocab_size")
	batch := flag.Int("batch", 4, "sequences per step")
	block := flag.Int("block", 512, "tokens per sequence")
	rank := flag.Int("lora_rank", 0, "LoRA rank (0: full fine-tune)")
	targets := flag.String("targets", "q_proj,k_proj,v_proj,o_proj", "LoRA target modules")
	ckpt := flag.Bool("ckpt", false, "activation checkpointing")
	warmup := flag.Int("warmup", 1, "untimed steps first")
	steps := flag.Int("steps", 2, "timed steps")
	keepMLP := flag.Bool("keep_mlp", false, "keep a frozen MLP's gate and up products for backward instead of recomputing them (nn.GatedMLP.KeepActivations)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the timed steps to this file")
	memprofile := flag.String("memprofile", "", "write a heap profile of the live activations after the first forward pass to this file (go tool pprof -sample_index=inuse_space)")
	flag.Parse()

	cfg := nn.LlamaConfig{ModelType: "llama", VocabSize: *vocab, HiddenSize: *hidden, IntermediateSize: *inter,
		NumHiddenLayers: *layers, NumAttentionHeads: *heads, NumKeyValueHeads: *kv, HeadDim: *hidden / *heads,
		MaxPositionEmbeddings: max(*block, 2048), RMSNormEps: 1e-5, RopeTheta: 100000, TieWordEmbeddings: true}
	gen := tensor.NewGenerator(1)
	model := nn.NewLlamaWith(cfg, gen)
	model.ActivationCheckpointing = *ckpt
	for _, l := range model.Layers {
		l.MLP.KeepActivations = *keepMLP
	}
	var trained nn.Module = model
	if *rank > 0 {
		l, err := nn.ApplyLoRA(model, nn.LoRAConfig{R: *rank, Alpha: float64(2 * *rank), TargetModules: strings.Split(*targets, ","), Gen: gen})
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchlora:", err)
			os.Exit(1)
		}
		trained = l
	}
	params := trained.Parameters()
	opt := optim.NewAdamWGroups(optim.DecayGroups(params, 0.1), adamW())
	n := *batch * *block
	tokens := func() (*tensor.Tensor, *tensor.Tensor) {
		ids := make([]int, n+1)
		for i := range ids {
			ids[i] = gen.IntN(*vocab)
		}
		var x, y []int
		for b := range *batch {
			x = append(x, ids[b**block:(b+1)**block]...)
			y = append(y, ids[b**block+1:(b+1)**block+1]...)
		}
		return tensor.FromInts(x, *batch, *block), tensor.FromInts(y, *batch, *block)
	}
	step := func() float32 {
		x, y := tokens()
		loss := model.Loss(x, y)
		loss.Backward()
		optim.ClipGradNorm(params, 1)
		opt.Step()
		opt.ZeroGrad()
		return loss.Item()
	}
	// the activations: the live heap after the first forward pass (its
	// buffers fresh from the heap, the free list still empty), less before
	live := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	x, y := tokens()
	before := live()
	loss := model.Loss(x, y)
	act := float64(live()) - float64(before)
	if *memprofile != "" {
		if err := writeHeapProfile(*memprofile); err != nil {
			fmt.Fprintln(os.Stderr, "benchlora:", err)
			os.Exit(1)
		}
	}
	loss.Backward()
	optim.ClipGradNorm(params, 1)
	opt.Step()
	opt.ZeroGrad()
	for range *warmup {
		step()
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchlora:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	var ms []float64
	for range *steps {
		start := time.Now()
		step()
		ms = append(ms, float64(time.Since(start).Microseconds())/1000)
	}
	mean := 0.0
	for _, v := range ms {
		mean += v / float64(len(ms))
	}
	fmt.Printf("benchlora lora_rank=%d ckpt=%v batch=%d block=%d ms/step=%.0f min_ms=%.0f activations=%.2fGiB peak_rss=%s trainable=%.2fM params=%.1fM\n",
		*rank, *ckpt, *batch, *block, mean, slices.Min(ms), act/(1<<30), peakRSS(), float64(nn.NumParams(trained))/1e6, float64(nn.NumParams(model))/1e6)
}

// writeHeapProfile writes the heap profile of the live objects to path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// peakRSS returns VmHWM from /proc/self/status, or "?".
func peakRSS() string {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return "?"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			var kb float64
			fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(v), " kB"), &kb)
			return fmt.Sprintf("%.2fGiB", kb/(1<<20))
		}
	}
	return "?"
}

// adamW returns cmd/train's AdamW: lr 1e-4, betas (0.9, 0.99), eps 1e-8,
// the weight decay in the groups.
func adamW() optim.AdamWConfig {
	c := optim.DefaultAdamW()
	c.LR, c.Beta2, c.WeightDecay = 1e-4, 0.99, 0
	return c
}
