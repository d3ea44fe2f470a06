//go:build ignore

// gen.go rebuilds kernels.ptx from the CUDA C sources in ../csrc with nvcc.
// Run it with `go generate ./cuda` (doc.go holds the directive) from the
// repository root, or `go run gen.go` in this directory; commit the result.
// It first writes ../csrc/unary_ops.cuh, the unary ops' enum and switches,
// from the op table in ../tensor/unary_ops.go (internal/cudagen).
//
// The PTX targets compute_70 (Volta) so that the driver can compile it for
// every GPU from Volta on, H100/H200 (sm_90) included. It is built with
// -fmad=false so that float expressions round as the CPU backend's Go code
// does. With -check, gen.go writes nothing and exits with status 1 when the
// committed unary_ops.cuh differs from what the table generates, or the
// committed kernels.ptx from what nvcc produces now (CI uses it).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/wickml/wick/internal/cudagen"
)

func main() {
	check := flag.Bool("check", false, "compare with the committed unary_ops.cuh and kernels.ptx instead of writing them")
	nvcc := flag.String("nvcc", "nvcc", "the CUDA compiler")
	flag.Parse()
	header(*check)
	tmp, err := os.MkdirTemp("", "wick-ptx")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, "kernels.ptx")
	cmd := exec.Command(*nvcc, "-ptx", "-arch=compute_70", "-fmad=false", "-std=c++14", "-O3",
		"-o", out, filepath.Join("..", "csrc", "wick.cu"))
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		fail(fmt.Errorf("%s: %w", cmd, err))
	}
	ptx, err := os.ReadFile(out)
	if err != nil {
		fail(err)
	}
	if *check {
		old, err := os.ReadFile("kernels.ptx")
		if err != nil {
			fail(err)
		}
		if !bytes.Equal(old, ptx) {
			fmt.Fprintln(os.Stderr, "gen: cuda/kernels.ptx is stale: run `go generate ./cuda` and commit the result")
			os.Exit(1)
		}
		fmt.Println("gen: cuda/kernels.ptx is current")
		return
	}
	if err := os.WriteFile("kernels.ptx", ptx, 0o644); err != nil {
		fail(err)
	}
}

// header writes csrc/unary_ops.cuh from the unary op table, or with check
// exits with status 1 if the committed one differs.
func header(check bool) {
	src, err := os.ReadFile(filepath.Join("..", cudagen.TablePath))
	if err != nil {
		fail(err)
	}
	h, err := cudagen.UnaryHeader(src)
	if err != nil {
		fail(err)
	}
	path := filepath.Join("..", cudagen.HeaderPath)
	if check {
		old, err := os.ReadFile(path)
		if err != nil {
			fail(err)
		}
		if !bytes.Equal(old, h) {
			fmt.Fprintf(os.Stderr, "gen: %s is stale: run `go generate ./cuda` and commit the result\n", cudagen.HeaderPath)
			os.Exit(1)
		}
		fmt.Printf("gen: %s is current\n", cudagen.HeaderPath)
		return
	}
	if err := os.WriteFile(path, h, 0o644); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gen:", err)
	os.Exit(1)
}
