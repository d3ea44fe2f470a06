package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/wickml/wick/internal/atomicfile"
	"github.com/wickml/wick/plot"
)

// logRecord is one line of out_dir/log.jsonl: a training step (kind
// "train") or an evaluation (kind "eval").
type logRecord struct {
	Kind         string   `json:"kind"`
	Iter         int      `json:"iter"`
	Loss         *float64 `json:"loss,omitempty"`
	LR           float64  `json:"lr,omitempty"`
	GradNorm     float64  `json:"grad_norm,omitempty"`
	MS           float64  `json:"ms,omitempty"`
	TokensPerSec float64  `json:"tokens_per_sec,omitempty"`
	TrainLoss    *float64 `json:"train_loss,omitempty"`
	ValLoss      *float64 `json:"val_loss,omitempty"`
	TrainPPL     float64  `json:"train_ppl,omitempty"`
	ValPPL       float64  `json:"val_ppl,omitempty"`
	Saved        bool     `json:"saved,omitempty"`
	LossScale    float64  `json:"loss_scale,omitempty"` // float16: the scale the step's loss was multiplied by
	Skipped      bool     `json:"skipped,omitempty"`    // float16: the step was skipped (inf/NaN gradients)
	Time         float64  `json:"time_s"`               // seconds since this process started training
}

// runLog appends records to log.jsonl and keeps them for the loss curve.
type runLog struct {
	f       *os.File
	records []logRecord
}

// openRunLog opens out_dir/log.jsonl. A fresh run (from = -1) starts it
// empty; a resumed run keeps the records of the iterations before from and
// the evaluation at from (made before the checkpoint was saved), and drops
// the later ones, which the resumed run will redo.
func openRunLog(dir string, from int) (*runLog, error) {
	path := filepath.Join(dir, "log.jsonl")
	l := &runLog{}
	if from >= 0 {
		if old, err := os.ReadFile(path); err == nil {
			var kept bytes.Buffer
			sc := bufio.NewScanner(bytes.NewReader(old))
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				var r logRecord
				if json.Unmarshal(sc.Bytes(), &r) == nil && (r.Iter < from || (r.Iter == from && r.Kind == "eval")) {
					l.records = append(l.records, r)
					kept.Write(sc.Bytes())
					kept.WriteByte('\n')
				}
			}
			if err := atomicfile.WriteFile(path, func(w io.Writer) error { _, err := w.Write(kept.Bytes()); return err }); err != nil {
				return nil, err
			}
		}
	}
	flags := os.O_CREATE | os.O_WRONLY | os.O_APPEND
	if from < 0 {
		flags |= os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		return nil, fmt.Errorf("log: %w", err)
	}
	l.f = f
	return l, nil
}

// add appends r to the file and the in-memory records.
func (l *runLog) add(r logRecord) error {
	l.records = append(l.records, r)
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("log: %w", err)
	}
	if _, err := l.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("log: %w", err)
	}
	return nil
}

func (l *runLog) close() error { return l.f.Close() }

// plot redraws dir/loss.svg and dir/loss.png from the records: the logged
// training losses and the evaluated train and val losses.
func (l *runLog) plot(dir, title string) error {
	var step, evTrain, evVal plot.Series
	step.Name, evTrain.Name, evVal.Name = "train loss (logged steps)", "train loss (eval)", "val loss (eval)"
	for _, r := range l.records {
		switch {
		case r.Kind == "train" && r.Loss != nil:
			step.X, step.Y = append(step.X, float64(r.Iter)), append(step.Y, *r.Loss)
		case r.Kind == "eval" && r.TrainLoss != nil && r.ValLoss != nil:
			evTrain.X, evTrain.Y = append(evTrain.X, float64(r.Iter)), append(evTrain.Y, *r.TrainLoss)
			evVal.X, evVal.Y = append(evVal.X, float64(r.Iter)), append(evVal.Y, *r.ValLoss)
		}
	}
	svg := plot.LossCurveSVG(title, step, evTrain, evVal)
	if err := atomicfile.WriteFile(filepath.Join(dir, "loss.svg"), func(w io.Writer) error {
		_, err := io.WriteString(w, svg)
		return err
	}); err != nil {
		return fmt.Errorf("loss curve: %w", err)
	}
	png, err := plot.LossCurvePNG(title, step, evTrain, evVal)
	if err != nil {
		return fmt.Errorf("loss curve: %w", err)
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, "loss.png"), func(w io.Writer) error {
		_, err := w.Write(png)
		return err
	}); err != nil {
		return fmt.Errorf("loss curve: %w", err)
	}
	return nil
}

// outputFiles are the files a run writes into out_dir, each through
// atomicfile.WriteFile (log.jsonl when a resumed run trims it).
var outputFiles = []string{ckptName, "log.jsonl", "loss.svg", "loss.png", "sample.txt"}

// openOutputs creates out_dir, the log and the progress reporter. It first
// deletes the temporary files of outputFiles that an earlier run, killed
// while writing one, left behind.
func (t *trainer) openOutputs(stdout io.Writer) error {
	t.rep = newReporter(stdout, t.o)
	if t.o.EvalOnly {
		return nil
	}
	if err := os.MkdirAll(t.o.OutDir, 0o755); err != nil {
		return fmt.Errorf("--out_dir: %w", err)
	}
	// before anything in out_dir is removed or written
	lock, err := lockOutDir(t.o.OutDir)
	if err != nil {
		return err
	}
	t.lock = lock
	removed, size, err := atomicfile.RemoveTempFiles(t.o.OutDir, outputFiles)
	if err != nil {
		return fmt.Errorf("--out_dir: %w", err)
	}
	if len(removed) > 0 {
		fmt.Fprintf(stdout, "removed %d temporary file(s) of %.1f MB that an interrupted run left in %s\n", len(removed), float64(size)/1e6, t.o.OutDir)
	}
	from := -1
	if t.o.Resume {
		from = t.iter
	}
	if from < 0 {
		kept, err := keepEarlierLog(t.o.OutDir)
		if err != nil {
			return err
		}
		if kept != "" {
			fmt.Fprintf(stdout, "%s holds the log of an earlier run: moved it to %s (this fresh run starts a new log; --resume continues a run)\n", filepath.Join(t.o.OutDir, "log.jsonl"), kept)
		}
	}
	l, err := openRunLog(t.o.OutDir, from)
	if err != nil {
		return err
	}
	t.log = l
	t.evalDone = -1
	for _, r := range l.records {
		if r.Kind == "eval" && r.Iter == from {
			t.evalDone = from
		}
	}
	return nil
}

func (t *trainer) closeOutputs() {
	if t.log != nil {
		t.log.close()
	}
	t.lock.release()
}

// prevLogName is where a fresh run moves the log.jsonl of an earlier run
// in its out_dir (replacing an older one there).
const prevLogName = "log.prev.jsonl"

// keepEarlierLog moves a non-empty dir/log.jsonl, written by an earlier
// run, to dir/log.prev.jsonl and returns that path, or "" when there was
// none.
func keepEarlierLog(dir string) (string, error) {
	path := filepath.Join(dir, "log.jsonl")
	st, err := os.Stat(path)
	if err != nil || st.Size() == 0 {
		return "", nil
	}
	prev := filepath.Join(dir, prevLogName)
	if err := os.Rename(path, prev); err != nil {
		return "", fmt.Errorf("log: keeping the earlier run's log: %w", err)
	}
	return prev, nil
}

// reporter shows progress: a bar redrawn in place when stdout is a
// terminal and no launcher started the process (or --progress=bar), plain
// log lines otherwise.
type reporter struct {
	w          io.Writer
	bar        bool
	tokPerIter int
	t0         time.Time
	first      int // iteration the run started at
	total      int
	done       int     // steps taken by this process
	trainSec   float64 // seconds spent in steps
	evals      int     // evaluations done by this process
	evalSec    float64 // seconds spent in them (with logging, plotting, saving)
	shown      bool    // a bar is on screen

	// the evaluation schedule and size, for the ETA (see eta)
	evalInterval, evalIters, gradAccum int
}

func newReporter(w io.Writer, o *options) *reporter {
	return &reporter{w: w, bar: useBar(o.Progress, w, os.Getenv), tokPerIter: o.BatchSize * o.BlockSize * o.GradAccum, t0: time.Now(),
		evalInterval: o.EvalInterval, evalIters: o.EvalIters, gradAccum: o.GradAccum}
}

// useBar reports whether progress is a bar: --progress=bar, or
// --progress=auto with w a terminal in a process that no launcher started.
// mpirun and srun give each rank a pseudo-terminal, and a bar redrawn there
// ends up, frame after frame, in the job's log, so under a launcher (a
// rank variable in getenv's environment, see launcherRank) auto means plain
// lines.
func useBar(progress string, w io.Writer, getenv func(string) string) bool {
	switch progress {
	case "bar":
		return true
	case "auto":
		if _, launched := launcherRank(getenv); launched {
			return false
		}
		if f, ok := w.(*os.File); ok {
			if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
				return true
			}
		}
	}
	return false
}

// rankVars are the variables in which launchers give a process its rank:
// Open MPI's mpirun, PMIx, MPICH's and Intel MPI's hydra (PMI), Slurm's
// srun, MVAPICH.
var rankVars = []string{"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID", "MV2_COMM_WORLD_RANK"}

// launcherRank returns the rank that a launcher gave this process, read
// from the first of rankVars set to a number, and whether one did.
func launcherRank(getenv func(string) string) (int, bool) {
	for _, name := range rankVars {
		if r, err := strconv.Atoi(getenv(name)); err == nil && r >= 0 {
			return r, true
		}
	}
	return 0, false
}

func (r *reporter) begin(first, total int) { r.first, r.total, r.t0 = first, total, time.Now() }

func (r *reporter) elapsed() float64 { return time.Since(r.t0).Seconds() }

// clear erases the bar before a permanent line.
func (r *reporter) clear() {
	if r.shown {
		fmt.Fprint(r.w, "\r\033[K")
		r.shown = false
	}
}

// line prints a permanent line (above the bar).
func (r *reporter) line(format string, args ...any) {
	r.clear()
	fmt.Fprintf(r.w, format+"\n", args...)
}

// step records a finished step and redraws the bar.
func (r *reporter) step(it int, loss, sec float64) {
	r.done++
	r.trainSec += sec
	if !r.bar {
		return
	}
	const width = 24
	frac := float64(it+1) / float64(max(r.total, 1))
	n := int(frac * width)
	bar := strings.Repeat("█", n) + strings.Repeat("░", width-n)
	eta := r.eta(it)
	fmt.Fprintf(r.w, "\r\033[K%5d/%d %s %3.0f%% loss %.4f | %s tok/s | ETA %s",
		it+1, r.total, bar, 100*frac, loss, humanRate(float64(r.tokPerIter*r.done)/r.trainSec), seconds(eta))
	r.shown = true
}

// evaluated records the seconds an evaluation took, with its logging,
// plotting and checkpoint.
func (r *reporter) evaluated(sec float64) {
	r.evals++
	r.evalSec += sec
}

// eta estimates the seconds left after step it (0-based) of total: the
// remaining steps at the mean step time of this process, plus the
// remaining evaluations (every eval_interval iterations and after the
// last) at their mean time. Before an evaluation has been timed, one
// counts as its 2·eval_iters forward passes at a third of a step's
// gradient_accumulation_steps forward and backward passes each.
func (r *reporter) eta(it int) float64 {
	if r.done == 0 {
		return math.Inf(1)
	}
	step := r.trainSec / float64(r.done)
	eval := step * float64(2*r.evalIters) / float64(3*max(r.gradAccum, 1))
	if r.evals > 0 {
		eval = r.evalSec / float64(r.evals)
	}
	return float64(r.total-it-1)*step + float64(evalsAfter(it+1, r.total, r.evalInterval))*eval
}

// evalsAfter counts the evaluations the loop runs from iteration from to
// total: at each multiple of interval, and at total.
func evalsAfter(from, total, interval int) int {
	if from > total || interval <= 0 {
		return 0
	}
	n := total/interval - (from-1)/interval
	if from == 0 {
		n = total/interval + 1
	}
	if total%interval != 0 {
		n++
	}
	return n
}

// logStep prints a training log line in plain mode.
func (r *reporter) logStep(rec logRecord) {
	if r.bar {
		return
	}
	skipped := ""
	if rec.Skipped {
		skipped = fmt.Sprintf(", skipped (inf/NaN gradients at loss scale %g)", rec.LossScale)
	}
	fmt.Fprintf(r.w, "iter %d: loss %.4f, lr %.2e, time %.2fms, %s tok/s%s\n", rec.Iter, *rec.Loss, rec.LR, rec.MS, humanRate(rec.TokensPerSec), skipped)
}

// finish ends the bar line and prints the throughput of this process.
func (r *reporter) finish() {
	r.clear()
	if r.done > 0 && r.trainSec > 0 {
		fmt.Fprintf(r.w, "%d steps in %s: %.1f ms/iter, %s tokens/s (%s wall time with evaluation)\n", r.done, seconds(r.trainSec),
			1000*r.trainSec/float64(r.done), humanRate(float64(r.tokPerIter*r.done)/r.trainSec), seconds(r.elapsed()))
		r.done, r.trainSec = 0, 0
	}
}

// humanRate writes 1234 as 1234 and 123456 as 123.5k.
func humanRate(v float64) string {
	if v >= 1e5 {
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}
