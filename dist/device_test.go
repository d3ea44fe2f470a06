package dist

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/wickml/wick/tensor"
)

// fakeNCCL stands in for a loaded NCCL in the bootstrap tests: its
// communicators record the id and rank they were made with.
type fakeNCCL struct {
	rank    int
	idErr   error
	initErr error
	calls   *sync.Map // "uniqueID on rank r" -> true
}

type fakeDeviceComm struct {
	id     [ncclIDLen]byte
	nranks int
	rank   int
	closed bool
}

func (f *fakeNCCL) uniqueID() ([ncclIDLen]byte, error) {
	f.calls.Store(fmt.Sprint("uniqueID on rank ", f.rank), true)
	var id [ncclIDLen]byte
	for i := range id {
		id[i] = byte(i*31 + 7)
	}
	return id, f.idErr
}

func (f *fakeNCCL) initRank(nranks int, id [ncclIDLen]byte, rank int) (deviceComm, error) {
	if f.initErr != nil {
		return nil, f.initErr
	}
	return &fakeDeviceComm{id: id, nranks: nranks, rank: rank}, nil
}

func (d *fakeDeviceComm) device() tensor.Device               { return tensor.CUDA(0) }
func (d *fakeDeviceComm) allReduceSum(*tensor.Tensor) error   { return nil }
func (d *fakeDeviceComm) broadcast(*tensor.Tensor, int) error { return nil }
func (d *fakeDeviceComm) describe() string                    { return "fake" }
func (d *fakeDeviceComm) destroy() error                      { d.closed = true; return nil }

// TestBootstrapNCCL checks the bootstrap over a local group of 3: only
// rank 0 creates the unique id, every rank joins with rank 0's id bytes,
// its own rank and the world size.
func TestBootstrapNCCL(t *testing.T) {
	calls := &sync.Map{}
	runLocal(t, 3, func(t testing.TB, c *Comm) {
		dc, err := bootstrapNCCL(c, func() (ncclLibrary, error) { return &fakeNCCL{rank: c.Rank(), calls: calls}, nil })
		if err != nil {
			t.Fatalf("rank %d: %v", c.Rank(), err)
		}
		f := dc.(*fakeDeviceComm)
		want, _ := (&fakeNCCL{calls: &sync.Map{}}).uniqueID()
		if f.id != want || f.rank != c.Rank() || f.nranks != 3 {
			t.Fatalf("rank %d joined with rank %d of %d and id %x…, want rank 0's id %x…", c.Rank(), f.rank, f.nranks, f.id[:8], want[:8])
		}
	})
	n := 0
	calls.Range(func(k, _ any) bool {
		n++
		if k != "uniqueID on rank 0" {
			t.Errorf("%v: only rank 0 creates the unique id", k)
		}
		return true
	})
	if n != 1 {
		t.Errorf("ncclGetUniqueId called %d times, want once (rank 0)", n)
	}
}

// TestBootstrapNCCLFailures checks that a failure on one rank (NCCL
// missing, no unique id, ncclCommInitRank failing) is returned on every
// rank instead of leaving the others waiting, naming the rank.
func TestBootstrapNCCLFailures(t *testing.T) {
	missing := ncclMissing([]string{"libnccl.so.2 (libnccl.so.2: cannot open shared object file)", "libnccl.so (libnccl.so: cannot open shared object file)"})
	for _, c := range []struct {
		name string
		lib  func(rank int) (ncclLibrary, error)
		want []string // in every rank's error (rank 1 failing: also in rank 1's own)
	}{
		{"missing on rank 1", func(r int) (ncclLibrary, error) {
			if r == 1 {
				return nil, missing
			}
			return &fakeNCCL{rank: r, calls: &sync.Map{}}, nil
		}, []string{"libnccl.so.2", "WICK_NCCL", "WICK_DIST_NCCL=0"}},
		{"no unique id", func(r int) (ncclLibrary, error) {
			return &fakeNCCL{rank: r, calls: &sync.Map{}, idErr: errors.New("ncclSystemError: no network interface")}, nil
		}, []string{"no network interface"}},
		{"init fails on rank 1", func(r int) (ncclLibrary, error) {
			f := &fakeNCCL{rank: r, calls: &sync.Map{}}
			if r == 1 {
				f.initErr = errors.New("ncclCommInitRank: ncclUnhandledCudaError")
			}
			return f, nil
		}, []string{"ncclUnhandledCudaError"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			runLocal(t, 3, func(tb testing.TB, comm *Comm) {
				dc, err := bootstrapNCCL(comm, func() (ncclLibrary, error) { return c.lib(comm.Rank()) })
				if err == nil || dc != nil || !errors.Is(err, ErrOnEveryRank) {
					tb.Fatalf("rank %d: bootstrap returned %v, %v; want an error matching ErrOnEveryRank", comm.Rank(), dc, err)
				}
				for _, w := range c.want {
					if !strings.Contains(err.Error(), w) {
						tb.Errorf("rank %d: %v\nwant it to say %q", comm.Rank(), err, w)
					}
				}
				if comm.Rank() != 1 && strings.Contains(c.name, "rank 1") && !strings.Contains(err.Error(), "rank 1") {
					tb.Errorf("rank %d: %v\nwant it to name rank 1", comm.Rank(), err)
				}
			})
		})
	}
}

// TestNCCLCandidates checks where NCCL is looked for: $WICK_NCCL, the
// sonames through the loader, then the NVIDIA wheels of Python
// installations that have one.
func TestNCCLCandidates(t *testing.T) {
	env := map[string]string{"WICK_NCCL": "/opt/nccl/libnccl.so.2", "VIRTUAL_ENV": "/venv"}
	files := map[string]bool{"/venv/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2": true}
	glob := func(p string) ([]string, error) {
		if p == "/venv/lib/python3*/site-packages" {
			return []string{"/venv/lib/python3.12/site-packages"}, nil
		}
		if files[p] {
			return []string{p}, nil
		}
		return nil, nil
	}
	got := ncclCandidates(func(k string) string { return env[k] }, "/home/u", glob)
	want := []string{"/opt/nccl/libnccl.so.2", "libnccl.so.2", "libnccl.so", "/venv/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("candidates:\n got %q\nwant %q", got, want)
	}
}

// TestGPURouting checks that collectives on GPU tensors go to the device
// communicator, set up once, and that a tensor on another GPU panics.
func TestGPURouting(t *testing.T) {
	saved := openDeviceComm
	defer func() { openDeviceComm = saved }()
	opened := 0
	openDeviceComm = func(c *Comm, dev tensor.Device) (deviceComm, error) {
		opened++
		return &fakeDeviceComm{}, nil
	}
	c := newSingle()
	if got := c.DeviceBackend(); got != "" {
		t.Errorf("DeviceBackend before the first GPU collective: %q", got)
	}
	for range 2 {
		dc, err := c.gpu("test", tensor.CUDA(0))
		if err != nil || dc == nil {
			t.Fatalf("gpu(cuda:0): %v, %v", dc, err)
		}
	}
	if dc, err := c.gpu("test", tensor.CPU); dc != nil || err != nil {
		t.Errorf("gpu(cpu): %v, %v; want the host path", dc, err)
	}
	if opened != 1 || c.DeviceBackend() != "fake" {
		t.Errorf("opened %d times, DeviceBackend %q", opened, c.DeviceBackend())
	}
	var te *tensor.Error
	if err := tensor.Catch(func() { c.gpu("dist.AllReduce", tensor.CUDA(1)) }); !errors.As(err, &te) || !strings.Contains(te.Msg, "one GPU per rank") {
		t.Errorf("a tensor on cuda:1 after cuda:0: %v, want a panic saying one GPU per rank", err)
	}
	// $WICK_DIST_NCCL=0: the host path, without opening NCCL.
	t.Setenv("WICK_DIST_NCCL", "0")
	c = newSingle()
	if dc, err := c.gpu("test", tensor.CUDA(0)); dc != nil || err != nil || c.DeviceBackend() != "host memory" {
		t.Errorf("WICK_DIST_NCCL=0: %v, %v, %q", dc, err, c.DeviceBackend())
	}
}
