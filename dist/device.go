package dist

// GPU tensors: in a build with -tags cuda,mpi, nccl.go loads NCCL and
// reduces tensors on this rank's GPU in place, on the GPU's compute stream.
// This file is the part that needs neither: where NCCL is looked for, the
// bootstrap over the Comm, and the routing of GPU tensors.

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/wickml/wick/internal/libsearch"
	"github.com/wickml/wick/tensor"
)

// deviceComm reduces and broadcasts contiguous Float32 tensors on one GPU,
// in place, queued on the GPU's compute stream. Its methods are called
// from one goroutine at a time (under the Comm's lock).
type deviceComm interface {
	device() tensor.Device
	allReduceSum(t *tensor.Tensor) error
	broadcast(t *tensor.Tensor, root int) error
	describe() string // such as "nccl 2.21.5 (/usr/lib/.../libnccl.so.2)"
	destroy() error
}

// openDeviceComm sets up the device communicator of c's ranks on dev; nil,
// nil means that GPU tensors go through host memory. nccl.go sets it in a
// build with -tags cuda,mpi; in other builds it stays nil.
var openDeviceComm func(c *Comm, dev tensor.Device) (deviceComm, error)

// devState is a Comm's device communicator, set up on the first
// collective on a GPU tensor.
type devState struct {
	mu   sync.Mutex
	done bool
	dc   deviceComm // nil: through host memory
	err  error
}

// gpu returns the device communicator for tensors on dev, setting it up on
// first use (every rank must then be in the same collective, as always);
// nil when GPU tensors go through host memory. It panics with op's name if
// dev is not the GPU of the first GPU collective: one GPU per rank.
func (c *Comm) gpu(op string, dev tensor.Device) (deviceComm, error) {
	if dev.Kind != tensor.KindCUDA || openDeviceComm == nil {
		return nil, nil
	}
	s := &c.dev
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.done {
		s.done = true
		if v := os.Getenv("WICK_DIST_NCCL"); v == "0" {
			return nil, nil
		}
		s.dc, s.err = openDeviceComm(c, dev)
	}
	if s.err != nil {
		return nil, s.err
	}
	if s.dc != nil && s.dc.device() != dev {
		panic(&tensor.Error{Op: op, Msg: fmt.Sprintf("a tensor on %s, but this rank's collectives run on %s: one GPU per rank", dev, s.dc.device())})
	}
	return s.dc, nil
}

// DeviceBackend describes how GPU tensors are reduced: "nccl 2.21.5
// (/usr/lib/x86_64-linux-gnu/libnccl.so.2)" once a collective on a GPU
// tensor has set NCCL up, "host memory" when GPU tensors go through host
// copies (builds without -tags cuda,mpi, one process, a local group, or
// $WICK_DIST_NCCL=0), and "" before the first collective on a GPU tensor
// in a build that would use NCCL.
func (c *Comm) DeviceBackend() string {
	s := &c.dev
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case openDeviceComm == nil || (s.done && s.dc == nil && s.err == nil):
		return "host memory"
	case s.dc != nil:
		return s.dc.describe()
	}
	return ""
}

// closeDevice destroys the device communicator, if any.
func (c *Comm) closeDevice() error {
	s := &c.dev
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dc == nil {
		return nil
	}
	err := s.dc.destroy()
	s.dc, s.err = nil, fmt.Errorf("dist: the Comm was finalized")
	return err
}

// ErrOnEveryRank marks an error that every rank of the job returns alike,
// such as NCCL missing on some rank when the first collective on a GPU
// tensor sets it up (errors.Is(err, ErrOnEveryRank)): a program may print
// it on rank 0 only and finalize every rank in order, rather than abort
// the job.
var ErrOnEveryRank = errors.New("dist: an error on every rank")

// everyRank is an error returned alike on every rank.
type everyRank struct{ err error }

func (e *everyRank) Error() string   { return e.err.Error() }
func (e *everyRank) Unwrap() []error { return []error{e.err, ErrOnEveryRank} }

// ncclIDLen is the size of ncclUniqueId (nccl.h: NCCL_UNIQUE_ID_BYTES).
const ncclIDLen = 128

// ncclLibrary is what the bootstrap calls of a loaded NCCL (nccl.go; a fake
// in the tests).
type ncclLibrary interface {
	// uniqueID is ncclGetUniqueId.
	uniqueID() ([ncclIDLen]byte, error)
	// initRank is ncclCommInitRank on this rank's GPU.
	initRank(nranks int, id [ncclIDLen]byte, rank int) (deviceComm, error)
}

// bootstrapNCCL sets up NCCL's communicator over the ranks of c, as
// PyTorch's ProcessGroupNCCL does over its store: every rank loads NCCL
// (load), and the ranks check that all of them could; rank 0 creates the
// unique id (ncclGetUniqueId) and broadcasts its 128 bytes over c; every
// rank joins with ncclCommInitRank, and the ranks check that all of them
// joined. A failure on any rank is returned on every rank (naming the
// rank), so that none waits in ncclCommInitRank for a rank that will not
// come; such errors match ErrOnEveryRank.
func bootstrapNCCL(c *Comm, load func() (ncclLibrary, error)) (deviceComm, error) {
	lib, err := load()
	if err := agreeOK(c, "load NCCL", err); err != nil {
		return nil, err
	}
	// Rank 0's unique id, after a byte that says whether it has one.
	buf := make([]byte, 1+ncclIDLen)
	if c.rank == 0 {
		id, err := lib.uniqueID()
		if err == nil {
			buf[0] = 1
			copy(buf[1:], id[:])
		} else {
			copy(buf[1:], err.Error())
		}
	}
	if err := c.BroadcastBytes(buf, 0); err != nil {
		return nil, err
	}
	if buf[0] != 1 {
		return nil, &everyRank{fmt.Errorf("dist: rank 0 could not create NCCL's unique id: %s", trimNUL(buf[1:]))}
	}
	var id [ncclIDLen]byte
	copy(id[:], buf[1:])
	dc, err := lib.initRank(c.size, id, c.rank)
	if err := agreeOK(c, "join NCCL's communicator", err); err != nil {
		if dc != nil {
			_ = dc.destroy()
		}
		return nil, err
	}
	return dc, nil
}

// agreeOK gathers every rank's err of the step what: nil when no rank
// failed, else, on every rank, this rank's own error or the first failing
// rank's, marked ErrOnEveryRank.
func agreeOK(c *Comm, what string, err error) error {
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	all, gerr := c.AllGather([]byte(msg))
	if gerr != nil {
		return gerr
	}
	if err != nil {
		return &everyRank{err}
	}
	for r, m := range all {
		if len(m) > 0 {
			return &everyRank{fmt.Errorf("dist: rank %d could not %s: %s", r, what, m)}
		}
	}
	return nil
}

func trimNUL(b []byte) string {
	for i, v := range b {
		if v == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// ncclSonames are the names NCCL 2 is loaded by, through the dynamic
// loader's search path.
var ncclSonames = []string{"libnccl.so.2", "libnccl.so"}

// ncclWheelDirs are where Python's NVIDIA wheels keep NCCL below a
// site-packages directory (pip's nvidia-nccl-cu12, which PyTorch brings).
var ncclWheelDirs = []string{"nvidia/nccl/lib", "nvidia/cu13/lib", "nvidia/cu12/lib", "torch/lib"}

// ncclCandidates returns what nccl.go tries to load, in order: $WICK_NCCL
// (a file) if set, each soname through the dynamic loader's search
// (LD_LIBRARY_PATH, the ld.so cache), then libnccl.so.2 in the NVIDIA wheel
// directories of the Python installations found below $VIRTUAL_ENV,
// $CONDA_PREFIX, the directories of $PYTHONPATH, ~/.local, /usr/local, /usr
// and /opt/conda. env, home and glob stand in for os.Getenv, the home
// directory and filepath.Glob.
func ncclCandidates(env func(string) string, home string, glob func(string) ([]string, error)) []string {
	return libsearch.Candidates(libsearch.Lib{
		EnvVar:       "WICK_NCCL",
		Sonames:      ncclSonames,
		WheelSonames: ncclSonames[:1],
		WheelDirs:    ncclWheelDirs,
	}, env, home, glob)
}

// ncclMissing is the error when no candidate loads: tried lists each
// candidate with the loader's reason.
func ncclMissing(tried []string) error {
	return fmt.Errorf("dist: cannot load NCCL for the collectives on GPU tensors; tried %s; install NCCL 2 (Debian's libnccl2, or pip's nvidia-nccl-cu12), add its directory to LD_LIBRARY_PATH or set WICK_NCCL to the library file, or set WICK_DIST_NCCL=0 to reduce GPU tensors through host memory",
		strings.Join(tried, ", "))
}
