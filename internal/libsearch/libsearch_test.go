package libsearch

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCandidatesOrder checks the order: the environment variable's file,
// the sonames, then each existing wheel file once, site by site.
func TestCandidatesOrder(t *testing.T) {
	lib := Lib{EnvVar: "WICK_X", Sonames: []string{"libx.so.2", "libx.so"}, WheelSonames: []string{"libx.so.2"}, WheelDirs: []string{"nvidia/x/lib", "torch/lib"}}
	env := map[string]string{"WICK_X": "/opt/x/libx.so.2", "VIRTUAL_ENV": "/venv", "PYTHONPATH": "/pp" + string(filepath.ListSeparator) + "/venv/lib/python3.11/site-packages"}
	files := map[string]bool{
		"/venv/lib/python3.11/site-packages/nvidia/x/lib/libx.so.2": true,
		"/venv/lib/python3.11/site-packages/torch/lib/libx.so.2":    true,
		"/pp/torch/lib/libx.so.2":                                   true,
		"/usr/lib/python3/dist-packages/nvidia/x/lib/libx.so.1":     true, // not a wheel soname
	}
	glob := func(pat string) ([]string, error) {
		if strings.Contains(pat, "*") || strings.HasSuffix(pat, "-packages") {
			var m []string
			for f := range files {
				for dir := filepath.Dir(f); dir != "/"; dir = filepath.Dir(dir) {
					if ok, _ := filepath.Match(pat, dir); ok && !slices.Contains(m, dir) {
						m = append(m, dir)
					}
				}
			}
			slices.Sort(m)
			return m, nil
		}
		if files[pat] {
			return []string{pat}, nil
		}
		return nil, nil
	}
	got := Candidates(lib, func(k string) string { return env[k] }, "/home/u", glob)
	want := []string{
		"/opt/x/libx.so.2", "libx.so.2", "libx.so",
		"/venv/lib/python3.11/site-packages/nvidia/x/lib/libx.so.2",
		"/venv/lib/python3.11/site-packages/torch/lib/libx.so.2",
		"/pp/torch/lib/libx.so.2",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Candidates:\n got %q\nwant %q", got, want)
	}
	// without the variables: the sonames, then the system site's wheel
	// file only if it has the wheel soname (it has libx.so.1: none)
	if got := Candidates(lib, func(string) string { return "" }, "", glob); !slices.Equal(got, lib.Sonames) {
		t.Errorf("without environment: %q, want %q", got, lib.Sonames)
	}
}
