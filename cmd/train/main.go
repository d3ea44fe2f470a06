// Command train trains a GPT-style causal language model on a text file
// with Wick, evaluates it, resumes interrupted runs and samples text from
// its checkpoints. Its flags are those of nanoGPT's train.py and sample.py;
// see the repository README or run `train --help`.
//
// This file only wires things together: corpus loading and tokenizers live
// in internal/data, the model in nn, the optimizer and learning-rate
// schedule in optim, the loss-curve picture in plot.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line args and returns the exit status: 0 on
// success, after --help and after a Ctrl-C that saved a checkpoint; 1 when
// something went wrong, after printing one line naming the problem on
// stderr. It never lets a panic escape as a stack trace.
func run(args []string, stdout, stderr io.Writer) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "train: %s\n", oneLine(fmt.Sprint(r)))
			code = 1
		}
	}()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	if len(args) > 0 && args[0] == "sample" {
		err = runSample(args[1:], stdout, stderr)
	} else {
		err = runTrain(ctx, args, stdout, stderr)
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		if !quietOnThisRank(err) {
			fmt.Fprintf(stderr, "train: %s%s\n", rankPrefix(), oneLine(err.Error()))
		}
		leaveJob(err)
		return 1
	}
	leaveJob(nil)
	return 0
}

// oneLine joins the lines of a (possibly joined) error message with "; ".
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ; ")), " ")
}
