package main

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/wickml/wick/internal/approx"
)

// TestEvalsAfter checks the count of evaluations against the loop's rule:
// an evaluation at each iteration that is a multiple of eval_interval, and
// after the last.
func TestEvalsAfter(t *testing.T) {
	for total := 0; total <= 30; total++ {
		for interval := 1; interval <= 12; interval++ {
			for from := 0; from <= total+1; from++ {
				want := 0
				for it := from; it <= total; it++ {
					if it%interval == 0 || it == total {
						want++
					}
				}
				if got := evalsAfter(from, total, interval); got != want {
					t.Fatalf("evalsAfter(%d, %d, %d) = %d, want %d", from, total, interval, got, want)
				}
			}
		}
	}
}

// TestETAIncludesEvaluation checks that the ETA counts the evaluations
// still to come at their measured time, and estimates one from the step
// time before any was measured.
func TestETAIncludesEvaluation(t *testing.T) {
	o := defaultOptions()
	o.EvalInterval, o.EvalIters, o.GradAccum = 100, 30, 1
	r := newReporter(nil, o)
	r.begin(0, 1000)
	if eta := r.eta(0); !math.IsInf(eta, 1) {
		t.Errorf("ETA before any step = %v, want +Inf", eta)
	}
	r.done, r.trainSec = 10, 1.0 // 0.1 s per step
	// after step 9: 990 steps and the evaluations at 100, 200, …, 1000;
	// none timed yet: each counts 2·30 forward passes at 0.1/3 s
	if got, want := r.eta(9), 990*0.1+10*(60*0.1/3); !approx.Scalar(got, want, 0, 1e-9) {
		t.Errorf("ETA with no evaluation timed = %v, want %v", got, want)
	}
	r.evaluated(4.0)
	r.evaluated(6.0) // 5 s each
	r.done, r.trainSec = 150, 15.0
	// after step 149: 850 steps and evaluations at 200, …, 1000
	if got, want := r.eta(149), 850*0.1+9*5.0; !approx.Scalar(got, want, 0, 1e-9) {
		t.Errorf("ETA = %v, want %v", got, want)
	}
	r.total = 1050 // not a multiple of eval_interval: one more after the last step
	if got, want := r.eta(149), 900*0.1+10*5.0; !approx.Scalar(got, want, 0, 1e-9) {
		t.Errorf("ETA with a final evaluation = %v, want %v", got, want)
	}
}

// TestUseBar: --progress=auto draws a bar on a terminal unless a launcher's
// rank variable is set (mpirun, srun: only plain lines then); bar always
// draws one, plain never.
func TestUseBar(t *testing.T) {
	tty, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0) // a character device, as a terminal is
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	pipeR, pipeW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pipeR.Close()
	defer pipeW.Close()
	none := func(string) string { return "" }
	for _, c := range []struct {
		progress string
		w        io.Writer
		env      func(string) string
		want     bool
	}{
		{"auto", tty, none, true},
		{"auto", pipeW, none, false},
		{"auto", &bytes.Buffer{}, none, false},
		{"bar", pipeW, none, true},
		{"plain", tty, none, false},
	} {
		if got := useBar(c.progress, c.w, c.env); got != c.want {
			t.Errorf("--progress=%s on %T without a launcher: bar %v, want %v", c.progress, c.w, got, c.want)
		}
	}
	for _, name := range rankVars {
		for _, v := range []string{"0", "3"} {
			env := func(k string) string {
				if k == name {
					return v
				}
				return ""
			}
			if r, ok := launcherRank(env); !ok || strconv.Itoa(r) != v {
				t.Errorf("%s=%s: launcherRank %d, %v", name, v, r, ok)
			}
			if useBar("auto", tty, env) {
				t.Errorf("%s=%s: --progress=auto draws a bar on a terminal", name, v)
			}
			if !useBar("bar", tty, env) {
				t.Errorf("%s=%s: --progress=bar draws no bar", name, v)
			}
		}
	}
	if _, ok := launcherRank(func(string) string { return "x" }); ok {
		t.Error("a rank variable that is not a number counts as a launcher's")
	}
}

// TestEvalRecordHugeLoss: a finite loss whose perplexity is past float64
// (above ~709) is logged without the perplexity, not a JSON error.
func TestEvalRecordHugeLoss(t *testing.T) {
	for _, loss := range []float64{709.8, 800, 1e300} {
		rec := evalRecord(10, loss, loss+1, 1.5)
		b, err := json.Marshal(rec)
		if err != nil {
			t.Fatalf("loss %v: json.Marshal: %v", loss, err)
		}
		if strings.Contains(string(b), "ppl") || !strings.Contains(string(b), `"val_loss"`) {
			t.Errorf("loss %v: record %s; want the losses without perplexities", loss, b)
		}
		if got := pplText(loss); got != "inf" {
			t.Errorf("pplText(%v) = %q, want inf", loss, got)
		}
	}
	rec := evalRecord(10, 2, 3, 1.5)
	approx.EqualScalar(t, "train_ppl", rec.TrainPPL, math.Exp(2), 1e-12, 0)
	if got := pplText(2); got != "7.39" {
		t.Errorf("pplText(2) = %q, want 7.39", got)
	}
}
