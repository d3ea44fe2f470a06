// Command train trains a GPT-style causal language model on a text file
// with Wick, evaluates it, resumes interrupted runs and samples text from
// its checkpoints. Its flags are those of nanoGPT's train.py and sample.py;
// see the repository README or run `train --help`.
//
// This file only wires things together: corpus loading and batches live in
// internal/data, the tokenizers in tokenizer, the model in nn, the
// optimizer and learning-rate schedule in optim, the loss-curve picture in
// plot.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line args and returns the exit status: 0 on
// success and after --help; 1 when something went wrong, after printing
// the problem on stderr (one line naming it; for an error that lists
// several problems, the others below it, one per indented line); 130
// after SIGINT (Ctrl-C) and 143 after SIGTERM, the statuses a shell
// reports for a process those signals end, once the command has stopped
// (training saves a checkpoint first).
// It never lets a panic escape as a stack trace.
func run(args []string, stdout, stderr io.Writer) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "train: %s\n", errorText(fmt.Sprint(r)))
			code = 1
		}
	}()
	ctx, stop := notifySignals(context.Background())
	defer stop()
	var err error
	if len(args) > 0 && args[0] == "sample" {
		err = runSample(ctx, args[1:], stdout, stderr)
	} else {
		err = runTrain(ctx, args, stdout, stderr)
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if sig := caughtSignal(ctx); sig != nil && (err == nil || errors.Is(err, context.Canceled)) {
		if err != nil {
			fmt.Fprintf(stderr, "train: %s\n", errorText(err.Error()))
		}
		// A job's ranks stop at the same step: finalizing waits for every
		// rank, so that none exits (and makes the launcher end the job)
		// before rank 0 has saved its checkpoint.
		leaveJob(err)
		return sig.exitStatus()
	}
	if err != nil {
		if !quietOnThisRank(err) {
			fmt.Fprintf(stderr, "train: %s%s\n", rankPrefix(), errorText(err.Error()))
		}
		leaveJob(err)
		return 1
	}
	leaveJob(nil)
	return 0
}

// errorText formats an error (or panic) message for stderr: its first line,
// which names the decisive problem, then each further line (the other
// problems of an error that lists several) once, indented by a tab. Blank
// lines are dropped.
func errorText(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	var b strings.Builder
	b.WriteString(strings.TrimSpace(lines[0]))
	seen := map[string]bool{}
	for _, l := range lines[1:] {
		l = strings.TrimSpace(l)
		if l == "" || seen[l] {
			continue
		}
		seen[l] = true
		b.WriteString("\n\t")
		b.WriteString(l)
	}
	return b.String()
}
