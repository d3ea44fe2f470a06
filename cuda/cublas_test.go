//go:build cuda

package cuda

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestCublasCandidates checks where cuBLAS is looked for: $WICK_CUBLAS,
// the sonames through the loader, then PyTorch's wheel directories of the
// Python installations found, newest soname first, each file once.
func TestCublasCandidates(t *testing.T) {
	root := t.TempDir()
	venv := filepath.Join(root, "venv")
	home := filepath.Join(root, "home")
	files := []string{
		filepath.Join(venv, "lib/python3.12/site-packages/nvidia/cublas/lib/libcublas.so.12"),
		filepath.Join(venv, "lib/python3.12/site-packages/nvidia/cu13/lib/libcublas.so.13"),
		filepath.Join(home, ".local/lib/python3.11/site-packages/nvidia/cublas/lib/libcublas.so.12"),
		filepath.Join(root, "pp/nvidia/cublas/lib/libcublas.so.11"),
		filepath.Join(venv, "lib/python3.12/site-packages/nvidia/cudnn/lib/libcudnn.so.9"), // not cuBLAS
	}
	for _, f := range files {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{
		"WICK_CUBLAS": "/opt/my/libcublas.so.12",
		"VIRTUAL_ENV": venv,
		"PYTHONPATH":  filepath.Join(root, "pp") + string(filepath.ListSeparator) + filepath.Join(root, "pp"),
	}
	got := cublasCandidates(func(k string) string { return env[k] }, home, filepath.Glob)
	want := append([]string{"/opt/my/libcublas.so.12"}, cublasSonames...)
	want = append(want, files[1], files[0], files[2], files[3])
	if !slices.Equal(got, want) {
		t.Errorf("candidates:\n got %q\nwant %q", got, want)
	}
	if got := cublasCandidates(func(string) string { return "" }, "", filepath.Glob); !slices.Equal(got[:len(cublasSonames)], cublasSonames) {
		t.Errorf("with no environment: got %q, want the sonames first", got)
	}
}
