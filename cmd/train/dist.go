package main

// Data-parallel training: train runs unchanged under mpirun -np N or srun
// (with a binary built with -tags mpi), one rank per process. As in
// nanoGPT's DDP, --batch_size is per rank and --gradient_accumulation_steps
// counts the micro-batches of one optimizer step over all ranks together,
// so it must be a multiple of the world size; a step therefore sees the
// same number of tokens on any number of ranks, and checkpoints do not
// depend on the world size.
//
// Micro-batch slot s of a step (0 ≤ s < gradient_accumulation_steps) draws
// its batches from its own generator, seeded with seed+s (slot 0 is the
// single-process sampler); rank r owns slots r·a … r·a+a-1, a being the
// accumulation steps per rank, so with a = 1 rank r's batches are seeded
// with seed+rank, as in nanoGPT. The slots' states are gathered into rank
// 0's checkpoint, so a run resumes exactly on any world size that divides
// gradient_accumulation_steps.
//
// Only rank 0 evaluates, logs, draws the loss curve, saves checkpoints and
// generates the sample; every rank steps, and the ranks agree on stopping
// (SIGINT or SIGTERM to any rank) at the start of each iteration.

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/wickml/wick/cuda"
	"github.com/wickml/wick/dist"
	"github.com/wickml/wick/internal/data"
	"github.com/wickml/wick/tensor"
	"github.com/wickml/wick/tokenizer"
)

// job is the Comm of a run of several ranks, nil when train runs alone.
// It is process-wide as MPI is: set once by joinJob, ended by leaveJob.
var job *dist.Comm

// jobError is an error that every rank of the job meets alike (a flag that
// does not fit the world size, a rank that differs from rank 0): rank 0
// prints it, the other ranks end quietly, and every rank leaves the job
// in order.
type jobError struct{ err error }

func (e *jobError) Error() string { return e.err.Error() }
func (e *jobError) Unwrap() error { return e.err }

// joinJob joins the launcher's job (a world of one without a launcher).
// The Comm it returns is nil when train runs alone.
func joinJob(o *options) (*dist.Comm, error) {
	c, err := dist.Init()
	if err != nil {
		return nil, err
	}
	if c.WorldSize() == 1 {
		return nil, nil
	}
	job = c
	if n := c.WorldSize(); o.GradAccum%n != 0 {
		return nil, &jobError{fmt.Errorf("--gradient_accumulation_steps=%d is not a multiple of the world size %d: as in nanoGPT, --batch_size is per rank and the accumulation steps of a step are shared out among the ranks (try --gradient_accumulation_steps=%d)",
			o.GradAccum, n, n*((o.GradAccum+n-1)/n))}
	}
	return c, nil
}

// leaveJob ends this rank's part in a job of several ranks after run
// printed err (nil on success): a rank that failed alone aborts the job,
// so that the others do not wait for it; otherwise every rank finalizes.
func leaveJob(err error) {
	if job == nil {
		return
	}
	var je *jobError
	if err != nil && !errors.As(err, &je) {
		job.Abort(1)
	}
	_ = job.Finalize()
}

// quietOnThisRank reports whether err is one that rank 0 prints for every
// rank.
func quietOnThisRank(err error) bool {
	var je *jobError
	return job != nil && job.Rank() != 0 && errors.As(err, &je)
}

// rankPrefix is "rank N: " on the ranks other than 0 of a job, so that
// their errors say where they happened.
func rankPrefix() string {
	if job == nil || job.Rank() == 0 {
		return ""
	}
	return fmt.Sprintf("rank %d: ", job.Rank())
}

// rankDevice returns the --device of this rank: with several ranks, "cuda"
// and "auto" on a GPU build mean GPU LocalRank mod the number of GPUs (one
// GPU per rank when the launcher starts as many ranks per node as there
// are GPUs).
func rankDevice(o *options, c *dist.Comm) string {
	if c == nil || (o.Device != "cuda" && o.Device != "auto") {
		return o.Device
	}
	if dev, err := resolveDevice(o.Device); err != nil || dev == tensor.CPU {
		return o.Device
	}
	return fmt.Sprintf("cuda:%d", c.LocalRank()%max(cuda.DeviceCount(), 1))
}

// announce prints, on rank 0, the world size and every rank's device: the
// first lines of a run of several ranks.
func announce(c *dist.Comm, dev tensor.Device, out io.Writer) error {
	host, _ := os.Hostname()
	me := fmt.Sprintf("%s on %s (local rank %d, pid %d, GOMAXPROCS %d)", dev, host, c.LocalRank(), os.Getpid(), runtime.GOMAXPROCS(0))
	all, err := c.AllGather([]byte(me))
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "dist: world size %d over %s; gradients averaged in buckets of %d MiB\n", c.WorldSize(), c.Backend(), dist.DefaultBucketBytes>>20)
	for r, d := range all {
		fmt.Fprintf(out, "dist: rank %d: %s\n", r, d)
	}
	return nil
}

// fingerprint is what every rank must agree on: the tokenizer, the corpus,
// the flags that shape the model and its training, and the step it starts
// from.
func fingerprint(o *options, tok tokenizer.Tokenizer, info corpusInfo, iter int) (map[string]string, error) {
	js, err := tok.MarshalJSON()
	if err != nil {
		return nil, err
	}
	f := map[string]string{
		"tokenizer": fmt.Sprintf("%s, %d tokens, crc32c %08x", tok.Kind(), tok.VocabSize(), crc32.Checksum(js, crc32.MakeTable(crc32.Castagnoli))),
		"corpus":    fmt.Sprintf("%d bytes, crc32c %08x", info.Bytes, info.CRC32C),
		"iter":      fmt.Sprint(iter),
	}
	// Every flag that changes the numbers; out_dir, device, data (a path
	// that may differ between nodes: the corpus is compared above), the
	// paths of a pretrained model and its tokenizer (the tokenizer is
	// compared above, and rank 0's weights are broadcast) and the display
	// flags may differ between ranks.
	var all map[string]any
	b, _ := json.Marshal(o)
	if err := json.Unmarshal(b, &all); err != nil {
		return nil, err
	}
	for k, v := range all {
		switch k {
		case "OutDir", "Device", "Data", "Progress", "Resume", "InitFrom", "TokenizerDir":
			continue
		}
		f[flagName(k)] = fmt.Sprint(v)
	}
	return f, nil
}

// flagName turns an options field name into its flag's name where they
// differ in more than case.
func flagName(field string) string {
	names := map[string]string{"GradAccum": "gradient_accumulation_steps", "DecayLR": "decay_lr", "LRDecayIters": "lr_decay_iters",
		"MinLR": "min_lr", "NLayer": "n_layer", "NHead": "n_head", "NEmbd": "n_embd", "EvalOnly": "eval_only", "AlwaysSave": "always_save_checkpoint",
		"LearningRate": "learning_rate", "MaxIters": "max_iters", "WeightDecay": "weight_decay", "GradClip": "grad_clip", "WarmupIters": "warmup_iters",
		"BatchSize": "batch_size", "BlockSize": "block_size", "EvalInterval": "eval_interval", "LogInterval": "log_interval", "EvalIters": "eval_iters",
		"VocabSize": "vocab_size", "DataMaxBytes": "data_max_bytes", "NumSamples": "num_samples", "NumTokens": "num_tokens", "TopK": "top_k"}
	if n, ok := names[field]; ok {
		return n
	}
	return strings.ToLower(field)
}

// startJob checks that every rank runs with the same configuration, makes
// the replicas equal (rank 0's weights), and seeds the other ranks'
// dropout with seed+rank. It is called once the model exists (and holds
// the checkpoint's weights on a resumed run).
func (t *trainer) startJob(c *dist.Comm) error {
	if c == nil {
		return nil
	}
	f, err := fingerprint(t.o, t.tok, t.info, t.iter)
	if err != nil {
		return err
	}
	if err := c.Agree(f); err != nil {
		var me *dist.MismatchError
		if errors.As(err, &me) {
			return &jobError{err}
		}
		return err
	}
	dp, err := dist.NewDataParallel(c, t.params(), dist.DataParallelConfig{})
	if errors.Is(err, dist.ErrOnEveryRank) { // such as NCCL missing: rank 0 says so
		return &jobError{err}
	}
	if err != nil {
		return err
	}
	t.dp = dp
	if c.Rank() == 0 && t.model.Parameters()[0].Device() != tensor.CPU {
		fmt.Fprintf(t.out, "dist: GPU gradients reduced over %s\n", c.DeviceBackend())
	}
	if r := c.Rank(); r > 0 {
		// The checkpoint's dropout state is rank 0's: the other ranks
		// draw streams of their own, fresh for the step they start at.
		tensor.ManualSeed(resumeMix(t.o.Seed+uint64(r), t.iter))
	}
	return nil
}

// resumeMix returns seed for a run from iteration 0 and a seed of its own
// for each later starting iteration, so that a resumed rank whose stream
// the checkpoint does not hold does not repeat its first batches.
func resumeMix(seed uint64, iter int) uint64 {
	return seed ^ uint64(iter)*0x9e3779b97f4a7c15
}

// slotSamplers returns the samplers of this rank's micro-batch slots
// (the package comment above), restored from meta on a resumed run.
func slotSamplers(o *options, c *dist.Comm, tokens *data.Tokens, meta *ckptMeta) ([]*data.Sampler, int, error) {
	rank, n := 0, 1
	if c != nil {
		rank, n = c.Rank(), c.WorldSize()
	}
	a := o.GradAccum / n
	var saved [][]byte
	iter := 0
	if meta != nil {
		iter = meta.Iter
		saved = meta.RNGSamplers
		if len(saved) == 0 && meta.RNGSampler != nil {
			saved = [][]byte{meta.RNGSampler}
		}
	}
	samplers := make([]*data.Sampler, a)
	for j := range samplers {
		s := rank*a + j
		gen := tensor.NewGenerator((o.Seed + uint64(s)) ^ saltTrainBatches)
		if s < len(saved) {
			if err := gen.SetState(saved[s]); err != nil {
				return nil, 0, fmt.Errorf("checkpoint %s is corrupt: batch sampler %d state: %v", ckptPath(o.OutDir), s, err)
			}
		} else if meta != nil {
			gen = tensor.NewGenerator(resumeMix((o.Seed+uint64(s))^saltTrainBatches, iter))
		}
		samplers[j] = data.NewSampler(tokens, o.BatchSize, o.BlockSize, gen)
	}
	return samplers, rank * a, nil
}

// gatherSamplerStates collects the states of every rank's samplers, in
// slot order, for the next checkpoint; every rank calls it at the same
// iterations.
func (t *trainer) gatherSamplerStates() error {
	mine := make([][]byte, len(t.samplers))
	for i, s := range t.samplers {
		mine[i] = s.Generator().State()
	}
	if t.dp == nil {
		t.samplerStates = mine
		return nil
	}
	js, err := json.Marshal(mine)
	if err != nil {
		return err
	}
	all, err := t.dp.Comm().AllGather(js)
	if err != nil {
		return err
	}
	t.samplerStates = t.samplerStates[:0]
	for r, b := range all {
		var part [][]byte
		if err := json.Unmarshal(b, &part); err != nil {
			return fmt.Errorf("rank %d sent sampler states that do not decode: %v", r, err)
		}
		t.samplerStates = append(t.samplerStates, part...)
	}
	return nil
}

// mainRank reports whether this process writes the outputs: rank 0, or the
// only process.
func (t *trainer) mainRank() bool { return t.dp == nil || t.dp.Comm().Rank() == 0 }

// stopRequested reports whether the run stops now: ctx was cancelled on
// this process or, with several ranks, on any rank.
func (t *trainer) stopRequested(ctx error) (bool, error) {
	if t.dp == nil {
		return ctx != nil, nil
	}
	flag := []float32{0}
	if ctx != nil {
		flag[0] = 1
	}
	if err := t.dp.Comm().AllReduceFloat32s(flag, dist.Sum); err != nil {
		return false, err
	}
	return flag[0] > 0, nil
}

// syncStep averages the gradients and the step's loss over the ranks.
func (t *trainer) syncStep(loss *float64) error {
	if t.dp == nil {
		return nil
	}
	if err := t.dp.SyncGrads(); err != nil {
		return err
	}
	l := []float32{float32(*loss)}
	if err := t.dp.Comm().AllReduceFloat32s(l, dist.Mean); err != nil {
		return err
	}
	*loss = float64(l[0])
	return nil
}

// worldSize returns the number of ranks training together.
func (t *trainer) worldSize() int {
	if t.dp == nil {
		return 1
	}
	return t.dp.Comm().WorldSize()
}
