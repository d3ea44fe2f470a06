// Command gpubench times Wick's GPT training step on a GPU, on the shapes
// of the GPU yardsticks (docs/design.md, performance yardsticks):
//
//   - baby: nanoGPT's baby GPT (n_layer 6, n_head 6, n_embd 384, block 256,
//     batch 64, vocabulary 65 characters, dropout 0.2), and
//   - gpt2: GPT-2 124M shapes (n_layer 12, n_head 12, n_embd 768, block
//     1024, vocabulary 50257, batch 8 by default, dropout 0).
//
// Each iteration is forward, backward, gradient clipping at 1, an AdamW
// step (lr 1e-3, betas (0.9, 0.99), weight decay 0.1 on ≥2-D weights) and
// zero-grad, on random tokens (throughput does not depend on the text).
// After -warmup iterations it times -iters more and prints one line per
// preset in the format of scripts/gpubench_peer.py, its PyTorch twin:
//
//	wick preset=baby device=cuda:0 ms/iter=41.20 tokens/s=397670 loss=4.2001 reserved_mib=9120
//
// Before each preset it prints a roofline prediction of the step on an
// H200 (roofline.go): the step's time if every kernel ran at the memory
// bandwidth or peak arithmetic rate, whichever bounds it, and each kind
// of kernel's share, so that the measured time can be read against it.
// -predict prints only the prediction (no GPU needed), -kernels adds each
// kernel's line. -clip times ClipGradNorm alone on the preset's gradients.
//
// It needs a build with the cuda tag (go build -tags cuda ./cmd/gpubench)
// and a GPU; scripts/device_check.sh builds it and runs it next to the
// peer. -device cpu runs the same step on the CPU (slowly).
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/wickml/wick/cuda"
	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/optim"
	"github.com/wickml/wick/tensor"
)

type preset struct {
	cfg   nn.GPTConfig
	batch int
}

var presets = map[string]preset{
	"baby": {nn.GPTConfig{VocabSize: 65, BlockSize: 256, NLayer: 6, NHead: 6, NEmbd: 384, Dropout: 0.2, Bias: false}, 64},
	"gpt2": {nn.GPTConfig{VocabSize: 50257, BlockSize: 1024, NLayer: 12, NHead: 12, NEmbd: 768, Dropout: 0, Bias: true}, 8},
}

func main() {
	names := flag.String("preset", "baby,gpt2", "comma-separated presets: baby, gpt2")
	device := flag.String("device", "cuda", "device: cuda, cuda:N or cpu")
	warmup := flag.Int("warmup", 3, "untimed iterations first")
	iters := flag.Int("iters", 10, "timed iterations")
	batch := flag.Int("batch_size", 0, "sequences per batch (0: the preset's)")
	tf32 := flag.Bool("tf32", false, "let matrix products use TF32 tensor cores")
	seed := flag.Uint64("seed", 1337, "random seed")
	onlyPredict := flag.Bool("predict", false, "print the roofline prediction only (no device needed)")
	kernels := flag.Bool("kernels", false, "print each kernel's predicted time, not only each kind's")
	clip := flag.Bool("clip", false, "time ClipGradNorm alone on the preset's gradients instead of the step")
	flag.Parse()
	if *onlyPredict {
		for _, name := range strings.Split(*names, ",") {
			p, ok := presets[name]
			if !ok {
				fmt.Fprintf(os.Stderr, "gpubench: unknown preset %q (want baby or gpt2)\n", name)
				os.Exit(1)
			}
			if *batch > 0 {
				p.batch = *batch
			}
			g := h200
			g.useTF = *tf32
			predict(os.Stdout, name, p.cfg, p.batch, g, *kernels)
		}
		return
	}
	if err := run(*names, *device, *warmup, *iters, *batch, *tf32, *seed, *kernels, *clip); err != nil {
		fmt.Fprintln(os.Stderr, "gpubench:", err)
		os.Exit(1)
	}
}

func run(names, device string, warmup, iters, batch int, tf32 bool, seed uint64, kernels, clip bool) error {
	dev, err := tensor.ParseDevice(device)
	if err != nil {
		return err
	}
	if dev.Kind == tensor.KindCUDA {
		if _, err := cuda.Open(dev.Index); err != nil {
			return err
		}
		cuda.SetAllowTF32(tf32)
	}
	if err := tensor.SetDefaultDevice(dev); err != nil {
		return err
	}
	for _, name := range strings.Split(names, ",") {
		p, ok := presets[name]
		if !ok {
			return fmt.Errorf("unknown preset %q (want baby or gpt2)", name)
		}
		if batch > 0 {
			p.batch = batch
		}
		g := h200
		g.useTF = tf32
		predict(os.Stdout, name, p.cfg, p.batch, g, kernels)
		run := bench
		if clip {
			run = benchClip
		}
		if err := run(name, dev, p, warmup, iters, seed); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

func bench(name string, dev tensor.Device, p preset, warmup, iters int, seed uint64) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	tensor.ManualSeed(seed)
	model := nn.NewGPT(p.cfg)
	params := model.Parameters()
	opt := optim.NewAdamWGroups(optim.DecayGroups(params, 0.1), optim.AdamWConfig{LR: 1e-3, Beta1: 0.9, Beta2: 0.99})
	b, t := p.batch, p.cfg.BlockSize
	step := func() *tensor.Tensor {
		x := tensor.RandInt(0, p.cfg.VocabSize, b, t)
		y := tensor.RandInt(0, p.cfg.VocabSize, b, t)
		loss := model.Loss(x, y)
		loss.Backward()
		optim.ClipGradNorm(params, 1) // reads the norm: one host sync per step
		opt.Step()
		opt.ZeroGrad()
		return loss
	}
	for range warmup {
		step().Item()
	}
	sync := func() error {
		if dev.Kind == tensor.KindCUDA {
			return cuda.Synchronize(dev.Index)
		}
		return nil
	}
	if err := sync(); err != nil {
		return err
	}
	t0 := time.Now()
	var loss *tensor.Tensor
	for range iters {
		loss = step()
	}
	l := loss.Item()
	if err := sync(); err != nil {
		return err
	}
	dt := time.Since(t0).Seconds() / float64(iters)
	var reserved int64
	if dev.Kind == tensor.KindCUDA {
		if s, err := cuda.Memory(dev.Index); err == nil {
			reserved = s.Reserved >> 20
		}
	}
	fmt.Printf("wick preset=%s device=%s ms/iter=%.2f tokens/s=%.0f loss=%.4f reserved_mib=%d\n",
		name, dev, dt*1e3, float64(b*t)/dt, l, reserved)
	return nil
}

// benchClip times optim.ClipGradNorm alone (the one-pass norm, its read
// back and the scaling) on gradients of the preset's parameter shapes, as
// one training step leaves them.
func benchClip(name string, dev tensor.Device, p preset, warmup, iters int, seed uint64) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	tensor.ManualSeed(seed)
	model := nn.NewGPT(p.cfg)
	params := model.Parameters()
	x := tensor.RandInt(0, p.cfg.VocabSize, 1, p.cfg.BlockSize)
	model.Loss(x, x).Backward()
	for range warmup {
		optim.ClipGradNorm(params, 1)
	}
	if dev.Kind == tensor.KindCUDA {
		if err := cuda.Synchronize(dev.Index); err != nil {
			return err
		}
	}
	t0 := time.Now()
	var norm float32
	for range iters {
		norm = optim.ClipGradNorm(params, 1) // reads the norm: waits for the device
	}
	dt := time.Since(t0).Seconds() / float64(iters)
	P := float64(nn.NumParams(model))
	fmt.Printf("wick clip preset=%s device=%s params=%.0f ms/call=%.3f GB/s=%.0f norm=%.4g\n",
		name, dev, P, dt*1e3, 4*P/dt/1e9, norm)
	return nil
}
