package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"hash/crc32"
	"io"
	"math"

	"github.com/wickml/wick/internal/data"
	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/optim"
	"github.com/wickml/wick/tensor"
	"github.com/wickml/wick/tokenizer"
)

// Salts that derive the generators of batch sampling from --seed, so that
// training batches, evaluation batches and dropout draw independent streams.
const (
	saltTrainBatches = 0x5851f42d4c957f2d
	saltEvalTrain    = 0x14057b7ef767814f
	saltEvalVal      = 0x2545f4914f6cdd1d
)

// runTrain is the train command: everything is checked and loaded before
// out_dir is touched, so bad input leaves it as it was.
func runTrain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o := defaultOptions()
	fs, groups := newFlagSet(o, false)
	if err := stoppableErr(ctx, "reading the config file stopped", func() error { return parseFlags(fs, o, args) }); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(stdout, fs, groups, false)
		}
		return err
	}
	if o.InitFrom == "resume" {
		o.Resume = true
	}
	var sd nn.StateDict
	var meta *ckptMeta
	if o.Resume {
		var err error
		o.ckptUnread = true
		if err := o.validate(); err != nil {
			return err
		}
		o.ckptUnread = false
		applyMaxMemory(o)
		if !o.EvalOnly {
			// not while another run trains there (and saves the checkpoint)
			if err := probeOutDir(o.OutDir); err != nil {
				return err
			}
		}
		sd, meta, err = readCheckpointStoppable(ctx, ckptPath(o.OutDir))
		if err != nil {
			return err
		}
		if o, err = stoppable(ctx, "reading the config file stopped", func() (*options, error) { return resumeOptions(meta, o, args) }); err != nil {
			return err
		}
		if err := checkResumeLoRA(meta.Options, o, ckptPath(o.OutDir)); err != nil {
			return err
		}
	}
	// validate reads a --start=FILE:path prompt
	if err := stoppableErr(ctx, "reading --start=FILE: stopped", o.validate); err != nil {
		return err
	}
	// A pretrained model's config.json and GPT-2's tokenizer are read
	// (and checked) before the corpus and the weights.
	var pre *pretrainedModel
	var tok tokenizer.Tokenizer
	if meta != nil {
		tok = meta.tok
	} else if o.pretrained() {
		var err error
		if pre, err = stoppable(ctx, "reading --init_from stopped", func() (*pretrainedModel, error) { return findPretrained(o) }); err != nil {
			return err
		}
		if err := applyPretrained(o, pre); err != nil {
			return err
		}
		if err := o.validate(); err != nil {
			return err
		}
		o.LoRABase = pre.dir
	}
	if err := o.validateLoRA(pre != nil || (meta != nil && o.LoRABase != ""), pre != nil && pre.llama != nil || meta != nil && meta.Llama != nil, tiedHead(pre, meta)); err != nil {
		return err
	}
	// nanoGPT's train.bin and val.bin fix the tokenizer: meta.pkl's
	// characters, or GPT-2's.
	var prep *data.Prepared
	if o.binDir != "" {
		var err error
		if prep, err = data.OpenPrepared(o.binDir); err != nil {
			return err
		}
		defer prep.Close()
		if tok, err = preparedTokenizer(o, prep, meta, pre); err != nil {
			return err
		}
	}
	if tok == nil && pre != nil && pre.llama != nil {
		var err error
		if tok, err = stoppable(ctx, "reading the tokenizer stopped", func() (tokenizer.Tokenizer, error) { return loadPretrainedTokenizer(o, pre.dir) }); err != nil {
			return err
		}
	}
	if tok == nil && o.Tokenizer == "gpt2" {
		var err error
		if tok, err = stoppable(ctx, "reading the GPT-2 tokenizer stopped", func() (tokenizer.Tokenizer, error) { return loadGPT2Tokenizer(o, preDir(pre)) }); err != nil {
			return err
		}
	}
	if pre != nil {
		if err := checkVocab(tok, pre); err != nil {
			return err
		}
	}
	// before reading the corpus: with the vocabulary known only for bpe,
	// gpt2 or a checkpoint (a char vocabulary counts 1 here, exactly below)
	if err := checkTrainMemory(o, knownVocab(o, meta, tok, pre), knownLlama(pre, meta)); err != nil {
		return err
	}
	comm, err := joinJob(o)
	if err == nil && (comm == nil || comm.Rank() == 0) {
		o.notes(stderr)
	}
	if err != nil {
		return err
	}
	if comm != nil && comm.Rank() > 0 {
		stdout = io.Discard // rank 0 reports for every rank
	}
	dev, err := useDevice(rankDevice(o, comm))
	if err != nil {
		return err
	}
	baseDT, err := loraBaseDType(o, dev)
	if err != nil {
		return err
	}
	// without a 16-bit LoRA base, --dtype is autocast's
	dt := tensor.Float32
	if baseDT == tensor.Float32 {
		dt, err = trainDType(o, dev)
	}
	if err != nil {
		return err
	}
	if comm != nil {
		if err := announce(comm, dev, stdout); err != nil {
			return err
		}
	}

	var trainIDs, valIDs *data.Tokens
	var info corpusInfo
	var corpusName string
	if prep != nil {
		trainIDs, valIDs = prep.Train, prep.Val
		info = corpusInfo{Name: prep.Dir, Bytes: int(prep.Bytes), CRC32C: prep.CRC32C}
		corpusName = prep.Dir + " (nanoGPT's train.bin and val.bin)"
		if err := checkPrepared(o, prep, tok); err != nil {
			return err
		}
	} else {
		if tok, trainIDs, valIDs, info, corpusName, err = readText(ctx, o, tok, meta); err != nil {
			return err
		}
	}
	if meta != nil && (meta.Data.Bytes != info.Bytes || meta.Data.CRC32C != info.CRC32C) && (comm == nil || comm.Rank() == 0) {
		fmt.Fprintf(stderr, "train: warning: resuming on a different corpus than the checkpoint's (%s, %d bytes)\n", meta.Data.Name, meta.Data.Bytes)
	}

	// a Llama-family model: the pretrained one's, or the checkpoint's
	var llama *nn.LlamaConfig
	switch {
	case pre != nil:
		llama = pre.llama
	case meta != nil:
		llama = meta.Llama
	}
	cfg := nn.GPTConfig{VocabSize: tok.VocabSize(), BlockSize: o.BlockSize, NLayer: o.NLayer, NHead: o.NHead,
		NEmbd: o.NEmbd, Dropout: float32(o.Dropout), Bias: o.Bias}
	if llama == nil {
		switch {
		case pre != nil:
			cfg = pre.cfg
		case meta != nil:
			cfg.VocabSize, cfg.Activation = meta.Model.VocabSize, meta.Model.Activation
		}
		if err := cfg.Validate(); err != nil {
			return err
		}
		if err := checkTrainMemory(o, cfg.VocabSize, nil); err != nil {
			return err
		}
		if meta != nil {
			m := meta.Model
			m.Dropout = cfg.Dropout // dropout may change on resume, as in nanoGPT
			if m != cfg {
				return fmt.Errorf("checkpoint %s has model %+v, which does not match %+v", ckptPath(o.OutDir), m, cfg)
			}
		}
	}
	tensor.ManualSeed(o.Seed)
	var model nn.CausalLM
	switch {
	case pre != nil:
		if model, err = stoppable(ctx, "reading --init_from stopped", func() (nn.CausalLM, error) { return loadPretrainedModel(pre, baseDT) }); err != nil {
			return err
		}
	case llama != nil:
		model = nn.NewLlama(*llama) // a resumed run: the checkpoint's weights follow
	default:
		model = nn.NewGPT(cfg)
	}
	lora, err := prepareModel(o, model)
	if err != nil {
		return err
	}
	opt := newOptimizer(trainable(model, lora), o)
	samplers, _, err := slotSamplers(o, comm, trainIDs, meta)
	if err != nil {
		return err
	}
	t := &trainer{o: o, model: model, lora: lora, opt: opt, tok: tok, train: trainIDs, val: valIDs,
		samplers: samplers, info: info, dt: dt, scaler: newScaler(dt),
		out: stdout, lastSaved: -1, evalDone: -1,
		sched: optim.CosineLR{MaxLR: o.LearningRate, MinLR: o.MinLR, WarmupIters: o.WarmupIters, DecayIters: o.decayIters()}}
	if meta != nil {
		path := ckptPath(o.OutDir)
		if err := loadModelState(path, model, sd); err != nil {
			return err
		}
		if baseDT != tensor.Float32 {
			nn.ToDType(model, baseDT) // the checkpoint holds the 16-bit base widened: rounded back exactly
		}
		if err := loadAdapterState(path, lora, sd); err != nil {
			return err
		}
		if err := opt.LoadStateDict(sd.WithPrefix(nn.OptimizerPrefix)); err != nil {
			return fmt.Errorf("checkpoint %s: optimizer state does not match the model: %v", path, err)
		}
		if err := tensor.GlobalGenerator().SetState(meta.RNGGlobal); err != nil {
			return fmt.Errorf("checkpoint %s is corrupt: global generator state: %v", path, err)
		}
		t.iter, t.bestVal, t.lastSaved = meta.Iter, meta.BestVal, meta.Iter
		if t.scaler != nil && meta.Scaler != nil {
			if sc := meta.Scaler; !(sc.Scale > 0 && !math.IsInf(float64(sc.Scale), 0)) || sc.GrowthTracker < 0 {
				return fmt.Errorf("checkpoint %s is corrupt: loss scaler state %+v", path, *sc)
			}
			t.scaler.SetState(meta.Scaler.Scale, meta.Scaler.GrowthTracker)
		}
	}
	if err := t.startJob(comm); err != nil {
		return err
	}
	if t.mainRank() {
		if err := t.openOutputs(stdout); err != nil {
			return err
		}
	} else {
		t.rep = newReporter(stdout, o)
	}
	defer t.closeOutputs()
	t.describe(corpusName, dev, nn.NumParams(model), meta != nil)
	t.describeLoRA()
	describeMemory(stdout, o, tok.VocabSize(), llama)
	return t.loop(ctx)
}

// readText reads the text corpus (--data, --dataset's input.txt or the
// default corpus), trains the tokenizer when tok is nil, encodes the text
// and splits it 90/10 into training and validation ids.
func readText(ctx context.Context, o *options, tok tokenizer.Tokenizer, meta *ckptMeta) (_ tokenizer.Tokenizer, trainIDs, valIDs *data.Tokens, info corpusInfo, name string, err error) {
	corpus, err := stoppable(ctx, "reading the corpus stopped", func() (*data.Corpus, error) { return openCorpus(o) })
	if err != nil {
		return nil, nil, nil, info, "", err
	}
	defer corpus.Close()
	info = corpusInfo{Name: corpus.Name, Bytes: len(corpus.Text), CRC32C: crc32.Checksum(corpus.Text, crc32.MakeTable(crc32.Castagnoli))}
	if tok == nil {
		if tok, err = tokenizer.Train(ctx, o.Tokenizer, corpus.Text, o.VocabSize); err != nil {
			if ctx.Err() != nil {
				return nil, nil, nil, info, "", interrupted(ctx, o.Tokenizer+" tokenizer training stopped")
			}
			return nil, nil, nil, info, "", err
		}
	}
	ids, err := data.Encode(ctx, tok, corpus.Text)
	if ctx.Err() != nil {
		return nil, nil, nil, info, "", interrupted(ctx, "tokenizing the corpus stopped")
	}
	if err != nil {
		if meta != nil {
			return nil, nil, nil, info, "", fmt.Errorf("tokenizer mismatch: %s does not fit the checkpoint's %s tokenizer: %v", corpus.Name, tok.Kind(), err)
		}
		return nil, nil, nil, info, "", fmt.Errorf("%s: %v", corpus.Name, err)
	}
	corpus.Close()
	trainIDs, valIDs, err = data.Split(ids, 0.9, o.BlockSize+1)
	if err != nil {
		return nil, nil, nil, info, "", err
	}
	return tok, trainIDs, valIDs, info, corpus.Name, nil
}

// newOptimizer returns nanoGPT's AdamW: weight decay on the ≥2-D tensors
// only, eps 1e-8.
func newOptimizer(model nn.Module, o *options) *optim.AdamW {
	// DefaultAdamW's fields are used as written, so --beta1=0 means zero;
	// the groups carry the weight decay.
	cfg := optim.DefaultAdamW()
	cfg.LR, cfg.Beta1, cfg.Beta2, cfg.Eps, cfg.WeightDecay = o.LearningRate, o.Beta1, o.Beta2, 1e-8, 0
	return optim.NewAdamWGroups(optim.DecayGroups(model.Parameters(), o.WeightDecay), cfg)
}

// openCorpus opens --data, or builds the default corpus of Go sources.
func openCorpus(o *options) (*data.Corpus, error) {
	if o.Data != "" {
		return data.Open(o.Data)
	}
	return data.DefaultCorpus(data.GoRoot(), o.DataMaxBytes)
}

// resumeOptions returns the options of a resumed run: the checkpoint's
// flags, overridden by the flags given now. Flags that fix the model's
// shape or the tokenizer must agree with the checkpoint.
func resumeOptions(meta *ckptMeta, given *options, args []string) (*options, error) {
	o := *meta.Options
	o.OutDir, o.EvalOnly, o.Progress = given.OutDir, false, "auto"
	o.Dtype = cmp.Or(o.Dtype, "float32")
	fs, _ := newFlagSet(&o, false)
	if err := parseFlags(fs, &o, args); err != nil {
		return nil, err
	}
	o.Resume, o.InitFrom = true, "resume"
	path := ckptPath(o.OutDir)
	kind := meta.tok.Kind()
	m := meta.Model
	if l := meta.Llama; l != nil { // the shape flags train set from its config.json
		m = nn.GPTConfig{NLayer: l.NumHiddenLayers, NHead: l.NumAttentionHeads, NEmbd: l.HiddenSize, BlockSize: meta.Options.BlockSize, Bias: meta.Options.Bias}
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"n_layer", o.NLayer, m.NLayer}, {"n_head", o.NHead, m.NHead},
		{"n_embd", o.NEmbd, m.NEmbd}, {"block_size", o.BlockSize, m.BlockSize},
		{"bias", o.Bias, m.Bias}, {"tokenizer", o.Tokenizer, kind},
	}
	if kind == "bpe" {
		checks = append(checks, struct {
			name      string
			got, want any
		}{"vocab_size", o.VocabSize, meta.Options.VocabSize})
	}
	for _, c := range checks {
		if c.got != c.want {
			return nil, fmt.Errorf("--%s=%v does not match the checkpoint %s (%s=%v): a resumed run keeps the checkpoint's model and tokenizer", c.name, c.got, path, c.name, c.want)
		}
	}
	// the checkpoint's config records the dtype it trained in (float32
	// before bfloat16 training existed); a resume keeps it
	if saved := cmp.Or(meta.Options.Dtype, "float32"); o.Dtype != saved {
		return nil, fmt.Errorf("--dtype=%s does not match the checkpoint %s (dtype=%s): a resumed run keeps the checkpoint's dtype", o.Dtype, path, saved)
	}
	return &o, nil
}

// seconds formats a duration given in seconds as 1h02m03s, 2m03s or 4.5s.
func seconds(s float64) string {
	switch {
	case math.IsInf(s, 0) || math.IsNaN(s):
		return "?"
	case s >= 3600:
		return fmt.Sprintf("%dh%02dm%02ds", int(s)/3600, int(s)%3600/60, int(s)%60)
	case s >= 60:
		return fmt.Sprintf("%dm%02ds", int(s)/60, int(s)%60)
	}
	return fmt.Sprintf("%.1fs", s)
}
