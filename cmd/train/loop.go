package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"time"

	"github.com/wickml/wick/autograd"
	"github.com/wickml/wick/dist"
	"github.com/wickml/wick/internal/atomicfile"
	"github.com/wickml/wick/internal/data"
	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/optim"
	"github.com/wickml/wick/tensor"
	"github.com/wickml/wick/tokenizer"
)

// trainer holds the state of one training run.
type trainer struct {
	o          *options
	model      nn.CausalLM
	lora       *nn.LoRA // the adapters trained, nil in a full fine-tune
	opt        *optim.AdamW
	sched      optim.CosineLR
	tok        tokenizer.Tokenizer
	train, val *data.Tokens
	samplers   []*data.Sampler // this rank's micro-batch slots (dist.go)
	info       corpusInfo
	out        io.Writer

	iter      int      // optimizer steps taken
	bestVal   *float64 // best validation loss so far
	lastSaved int      // iteration of the checkpoint in out_dir, -1 if none of this run
	evalDone  int      // iteration whose evaluation a resumed run's log already holds, or -1

	log  *runLog
	lock *dirLock // out_dir's, held while the run writes there
	rep  *reporter

	dp            *dist.DataParallel // nil when training alone
	samplerStates [][]byte           // every slot's sampler state at the last evaluation

	dt     tensor.DType      // --dtype: Float32, or BFloat16 or Float16 for autocast (dtype.go)
	scaler *optim.GradScaler // float16's dynamic loss scaling, nil for the other dtypes
}

// loop runs nanoGPT's training loop from t.iter to max_iters: at every
// eval_interval (and after the last step) it evaluates, logs, redraws the
// loss curve and saves the checkpoint when the validation loss improved;
// in between it takes optimizer steps. A cancelled ctx (Ctrl-C) saves a
// checkpoint of the current state and returns nil.
func (t *trainer) loop(ctx context.Context) error {
	o := t.o
	t.rep.begin(t.iter, o.MaxIters)
	for {
		if stop, err := t.stopRequested(ctx.Err()); err != nil {
			return err
		} else if stop {
			return t.interrupted()
		}
		it := t.iter
		lr := o.LearningRate
		if o.DecayLR {
			lr = t.sched.At(it)
		}
		t.opt.SetLR(lr)
		evalNow := it%o.EvalInterval == 0 || it >= o.MaxIters || o.EvalOnly
		if evalNow {
			if err := t.gatherSamplerStates(); err != nil {
				return err
			}
		}
		if o.EvalOnly && !t.mainRank() {
			return nil
		}
		if evalNow && (it != t.evalDone || o.EvalOnly) && t.mainRank() {
			evalStart := time.Now()
			evalCtx := ctx
			if t.dp != nil {
				evalCtx = context.Background() // the ranks stop together, at the top of the loop
			}
			trainLoss, valLoss, ok := t.evaluate(evalCtx)
			if !ok {
				return t.interrupted()
			}
			if err := t.afterEval(it, trainLoss, valLoss); err != nil {
				return err
			}
			t.rep.evaluated(time.Since(evalStart).Seconds())
			if o.EvalOnly {
				return nil
			}
		}
		if it >= o.MaxIters {
			break
		}
		start := time.Now()
		scale := t.lossScale()
		loss, norm, skipped, err := t.step()
		if err != nil {
			return err
		}
		dt := time.Since(start).Seconds()
		t.iter++
		t.rep.step(it, loss, dt)
		if it%o.LogInterval == 0 && t.log != nil {
			rec := logRecord{Kind: "train", Iter: it, Loss: &loss, LR: lr, GradNorm: float64(norm),
				MS: dt * 1000, TokensPerSec: float64(o.BatchSize*o.BlockSize*o.GradAccum) / dt, Time: t.rep.elapsed(),
				LossScale: scale, Skipped: skipped}
			if err := t.log.add(rec); err != nil {
				return err
			}
			t.rep.logStep(rec)
		}
	}
	t.rep.finish()
	return t.finish(ctx)
}

// step takes one optimizer step over gradient_accumulation_steps
// micro-batches (this rank's share of them, the gradients averaged over
// the ranks) and returns the mean loss and the gradient norm before
// clipping. A non-finite loss stops before the weights change. In
// float16 (t.scaler) the loss is scaled before Backward and the
// gradients unscaled before clipping, as with torch.cuda.amp.GradScaler;
// a step whose gradients hold an inf or NaN is skipped (skipped, the
// norm then 0) and the scale halved.
func (t *trainer) step() (loss float64, norm float32, skipped bool, err error) {
	o := t.o
	for _, s := range t.samplers {
		x, y := s.Next()
		var l *tensor.Tensor
		t.autocast(func() {
			l = t.model.Loss(tensor.FromInts(x, o.BatchSize, o.BlockSize), tensor.FromInts(y, o.BatchSize, o.BlockSize))
		})
		v := float64(l.Item())
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, 0, false, t.diverged(fmt.Sprintf("training loss is %v at iteration %d", v, t.iter))
		}
		loss += v / float64(len(t.samplers))
		if len(t.samplers) > 1 {
			l = l.DivScalar(float32(len(t.samplers)))
		}
		if t.scaler != nil {
			l = t.scaler.ScaleLoss(l)
		}
		l.Backward()
	}
	if err := t.syncStep(&loss); err != nil {
		return 0, 0, false, err
	}
	params := t.params()
	// (the ranks' gradients are averaged: an inf on one is an inf on all,
	// so every rank skips the same steps)
	if t.scaler != nil && t.scaler.Unscale(params) {
		skipped = true
	}
	if o.GradClip > 0 && !skipped {
		norm = optim.ClipGradNorm(params, float32(o.GradClip))
	}
	if t.scaler != nil {
		t.scaler.Step(t.opt, params)
		t.scaler.Update()
	} else {
		t.opt.Step()
	}
	t.opt.ZeroGrad()
	return loss, norm, skipped, nil
}

// lossScale returns the scale of float16's loss scaling for the next
// step, 0 for the other dtypes.
func (t *trainer) lossScale() float64 {
	if t.scaler == nil {
		return 0
	}
	return float64(t.scaler.Scale())
}

// evaluate returns the mean loss over eval_iters batches of each split,
// in eval mode and without recording. Its batches come from generators
// seeded by --seed alone, so every evaluation sees the same batches and
// evaluating never disturbs the training batches. ok is false when ctx was
// cancelled.
func (t *trainer) evaluate(ctx context.Context) (trainLoss, valLoss float64, ok bool) {
	o := t.o
	t.model.Eval()
	defer t.model.Train()
	mean := func(tokens *data.Tokens, salt uint64) float64 {
		s := data.NewSampler(tokens, o.BatchSize, o.BlockSize, tensor.NewGenerator(o.Seed^salt))
		var sum float64
		autograd.NoGrad(func() {
			for range o.EvalIters {
				if ctx.Err() != nil {
					return
				}
				x, y := s.Next()
				t.autocast(func() {
					sum += float64(t.model.Loss(tensor.FromInts(x, o.BatchSize, o.BlockSize), tensor.FromInts(y, o.BatchSize, o.BlockSize)).Item())
				})
			}
		})
		return sum / float64(o.EvalIters)
	}
	trainLoss = mean(t.train, saltEvalTrain)
	valLoss = mean(t.val, saltEvalVal)
	return trainLoss, valLoss, ctx.Err() == nil
}

// afterEval logs an evaluation, redraws the loss curve and saves the
// checkpoint when the validation loss improved (or always_save_checkpoint).
func (t *trainer) afterEval(it int, trainLoss, valLoss float64) error {
	for _, v := range []float64{trainLoss, valLoss} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return t.diverged(fmt.Sprintf("evaluation loss is %v at iteration %d", v, it))
		}
	}
	rec := evalRecord(it, trainLoss, valLoss, t.rep.elapsed())
	improved := t.bestVal == nil || valLoss < *t.bestVal
	msg := ""
	if (improved || t.o.AlwaysSave) && it > 0 && !t.o.EvalOnly {
		if improved {
			t.bestVal = &valLoss
		}
		if err := t.save(); err != nil {
			return err
		}
		msg = ", saved " + t.ckptPath()
		rec.Saved = true
	}
	if !t.o.EvalOnly {
		if err := t.log.add(rec); err != nil {
			return err
		}
		if err := t.log.plot(t.o.OutDir, t.title()); err != nil {
			return err
		}
	}
	t.rep.line("step %d: train loss %.4f (ppl %s), val loss %.4f (ppl %s)%s", it, trainLoss, pplText(trainLoss), valLoss, pplText(valLoss), msg)
	return nil
}

// evalRecord returns the log record of an evaluation at iteration it. A
// finite loss above ~709 has a perplexity past float64's range, which JSON
// cannot write: the record then leaves the perplexity out (as the loss
// alone says all there is to say).
func evalRecord(it int, trainLoss, valLoss, elapsed float64) logRecord {
	return logRecord{Kind: "eval", Iter: it, TrainLoss: &trainLoss, ValLoss: &valLoss,
		TrainPPL: perplexity(trainLoss), ValPPL: perplexity(valLoss), Time: elapsed}
}

// perplexity returns exp(loss), or 0 (omitted from the log) when that is
// not a finite float64.
func perplexity(loss float64) float64 {
	p := math.Exp(loss)
	if math.IsInf(p, 0) || math.IsNaN(p) {
		return 0
	}
	return p
}

// pplText formats exp(loss) for the progress line: "inf" past float64.
func pplText(loss float64) string {
	if p := perplexity(loss); p != 0 || loss < 0 {
		return fmt.Sprintf("%.2f", p)
	}
	return "inf"
}

// save writes the checkpoint of the current state.
func (t *trainer) save() error {
	meta := &ckptMeta{Iter: t.iter, BestVal: t.bestVal, Options: t.o, tok: t.tok,
		RNGGlobal: tensor.GlobalGenerator().State(), RNGSampler: t.samplerStates[0], Data: t.info}
	if t.scaler != nil {
		meta.Scaler = &scalerState{Scale: t.scaler.Scale(), GrowthTracker: t.scaler.GrowthTracker()}
	}
	if len(t.samplerStates) > 1 {
		meta.RNGSamplers = t.samplerStates
	}
	if err := saveCheckpoint(t.ckptPath(), t.model, t.lora, t.opt, meta); err != nil {
		return err
	}
	t.lastSaved = t.iter
	return t.saveAdapter()
}

func (t *trainer) ckptPath() string { return ckptPath(t.o.OutDir) }

// interrupted saves a checkpoint after Ctrl-C and reports it.
func (t *trainer) interrupted() error {
	t.rep.finish()
	if err := t.gatherSamplerStates(); err != nil {
		return err
	}
	if !t.mainRank() {
		return nil
	}
	if t.o.EvalOnly {
		fmt.Fprintln(t.out, "interrupted")
		return nil
	}
	if err := t.save(); err != nil {
		return fmt.Errorf("interrupted, and saving the checkpoint failed: %w", err)
	}
	fmt.Fprintf(t.out, "interrupted at iteration %d: saved %s; continue with --resume --out_dir=%s\n", t.iter, t.ckptPath(), t.o.OutDir)
	return nil
}

// diverged returns the error of a non-finite loss, saying which checkpoint
// is kept.
func (t *trainer) diverged(what string) error {
	t.rep.finish()
	kept := "no checkpoint was saved"
	if t.lastSaved >= 0 {
		kept = fmt.Sprintf("the last good checkpoint (iteration %d) is kept in %s", t.lastSaved, t.ckptPath())
	}
	return fmt.Errorf("%s: training diverged (try a lower --learning_rate); %s", what, kept)
}

// finish prints the summary and the generated sample, also written to
// out_dir/sample.txt. A cancelled ctx stops the sampling (the checkpoint is
// saved already).
func (t *trainer) finish(ctx context.Context) error {
	if !t.mainRank() {
		return nil
	}
	if t.bestVal != nil {
		fmt.Fprintf(t.out, "done: %d iterations, best val loss %.4f, checkpoint %s\n", t.iter, *t.bestVal, t.ckptPath())
	}
	if t.o.NumSamples == 0 {
		return nil
	}
	text, err := generate(ctx, t.model, t.tok, t.o)
	if err != nil {
		return err
	}
	how := fmt.Sprintf("temperature %g, top_k %d", t.o.Temperature, t.o.TopK)
	if t.o.Temperature == 0 {
		how = "temperature 0: greedy"
	}
	fmt.Fprintf(t.out, "sample (prompt %q, %d tokens, %s):\n%s\n", t.o.Prompt, t.o.NumTokens, how, text)
	return atomicfile.WriteFile(filepath.Join(t.o.OutDir, "sample.txt"), func(w io.Writer) error {
		_, err := io.WriteString(w, text+"\n")
		return err
	})
}

// title is the loss-curve picture's title: corpus, n_layer/n_head/n_embd,
// block size and tokenizer (ASCII only: the PNG font has no other
// characters).
func (t *trainer) title() string {
	o := t.o
	family := "GPT"
	if t.model != nil && t.model.ModelType() != "gpt2" {
		family = t.model.ModelType()
	}
	return fmt.Sprintf("%s: %s %d/%d/%d, block %d, %s", filepath.Base(dataName(o)), family, o.NLayer, o.NHead, o.NEmbd, o.BlockSize, o.Tokenizer)
}

func dataName(o *options) string {
	if o.binDir != "" {
		return o.binDir
	}
	if o.Data == "" {
		return "Go sources"
	}
	return o.Data
}

// describe prints what the run is about to do.
func (t *trainer) describe(corpus string, dev tensor.Device, nParams int, resumed bool) {
	o := t.o
	fmt.Fprintf(t.out, "data: %s: %d train and %d val tokens, %s tokenizer with %d tokens\n",
		corpus, t.train.Len(), t.val.Len(), t.tok.Kind(), t.tok.VocabSize())
	if l, ok := t.model.(*nn.Llama); ok {
		c := l.Config
		fmt.Fprintf(t.out, "model: %s, %d layers, %d heads (%d key/value), hidden %d, block_size=%d: %.2fM parameters on %s\n",
			c.ModelType, c.NumHiddenLayers, c.NumAttentionHeads, c.NumKeyValueHeads, c.HiddenSize, o.BlockSize, float64(nParams)/1e6, dev)
	} else {
		fmt.Fprintf(t.out, "model: n_layer=%d n_head=%d n_embd=%d block_size=%d dropout=%g bias=%v: %.2fM parameters on %s\n",
			o.NLayer, o.NHead, o.NEmbd, o.BlockSize, o.Dropout, o.Bias, float64(nParams)/1e6, dev)
	}
	fmt.Fprintf(t.out, "training: %d iterations of %d×%d tokens", o.MaxIters, o.BatchSize*o.GradAccum, o.BlockSize)
	switch t.dt {
	case tensor.BFloat16:
		fmt.Fprint(t.out, " in bfloat16 autocast")
	case tensor.Float16:
		fmt.Fprintf(t.out, " in float16 autocast with loss scaling (scale %g)", t.scaler.Scale())
	}
	if resumed {
		fmt.Fprintf(t.out, ", resuming at iteration %d", t.iter)
	}
	fmt.Fprintf(t.out, "; output in %s\n", o.OutDir)
}
