// Package golden compares test output with golden files, and rewrites the
// files when the tests run with -update-golden. Only tests import it.
package golden

import (
	"flag"
	"os"
	"testing"
)

var update = flag.Bool("update-golden", false, "rewrite golden files with the tests' output")

// Check fails t unless got equals the contents of the file at path; with
// -update-golden it writes got to path instead.
func Check(t testing.TB, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update-golden to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (check the change, then run go test -update-golden):\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}
