package golden

import (
	"os"
	"path/filepath"
	"testing"
)

// recorder is a testing.TB that records failures instead of reporting them.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true }

func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.golden")
	if err := os.WriteFile(path, []byte("want\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path, got string
		fail      bool
	}{
		{path, "want\n", false},
		{path, "other\n", true},
		{filepath.Join(t.TempDir(), "missing"), "want\n", true},
	} {
		r := &recorder{TB: t}
		Check(r, c.path, c.got)
		if r.failed != c.fail {
			t.Errorf("Check(%s, %q): failed=%v, want %v", c.path, c.got, r.failed, c.fail)
		}
	}
}
