// Package dist runs data-parallel training over several processes: one
// process per CPU socket, per node or per GPU, started by the launchers that
// clusters already have (mpirun, srun, mpiexec), exchanging tensors through
// MPI.
//
// Init joins the job the launcher set up and returns a *Comm with the
// process's Rank, the WorldSize and its LocalRank on the node. AllReduce
// (sum or mean) and Broadcast work on float32 tensors in place; Barrier
// waits for every rank; Agree checks that every rank runs with the same
// configuration; Finalize leaves the job. DataParallel keeps the replicas
// of a model equal: it broadcasts the parameters from rank 0 and averages
// the gradients after each backward pass, in buckets of 25 MiB like
// PyTorch's DistributedDataParallel.
//
// # Builds
//
// MPI needs cgo, and the default build of Wick is pure Go, so the MPI
// transport is behind the build tag mpi:
//
//	apt-get install libopenmpi-dev openmpi-bin   # or libmpich-dev mpich
//	go build -tags mpi ./cmd/train
//	mpirun -np 2 ./train --batch_size=12
//
// The flags come from pkg-config's "mpi" package (Debian's alternatives
// point it at Open MPI or MPICH); where there is none, build with
// -tags mpi,mpicc and CC=mpicc. Only the standard MPI C API is used, so
// Open MPI and MPICH both work.
//
// Without the tag, Init returns a Comm of one process (rank 0, world size
// 1) on which the collectives do nothing, and an error naming the tag when
// the environment says the process was started as one of several ranks
// (OMPI_COMM_WORLD_SIZE, PMI_SIZE or SLURM_STEP_NUM_TASKS above 1).
// NewLocalGroup runs several ranks as goroutines of one process, in either
// build, for tests and for experiments on one machine.
//
// # GPUs
//
// In a build with -tags cuda,mpi, AllReduce and Broadcast of a tensor on a
// GPU, and DataParallel's buckets of GPU parameters, go through NCCL: in
// place, on the GPU's compute stream, one GPU per rank (cmd/train gives
// rank r GPU LocalRank mod the node's GPU count). NCCL is not linked: the
// first collective on a GPU tensor loads it with dlopen ($WICK_NCCL, then
// libnccl.so.2 and libnccl.so through the loader's search path, then the
// NVIDIA wheels of a Python installation), and sets up its communicator
// over MPI: rank 0 creates the unique id (ncclGetUniqueId), MPI broadcasts
// it, every rank joins (ncclCommInitRank), and a failure on any rank is
// returned on every rank. Without NCCL that collective returns an error
// that lists every file tried; with $WICK_DIST_NCCL=0 GPU tensors go
// through host copies and MPI instead, as they do in every other build.
// DeviceBackend says which.
//
//	go build -tags cuda,mpi ./cmd/train
//	mpirun -np 8 ./train --device=cuda   # a node of 8 GPUs
//
// # Faults
//
// MPI's default error handler aborts the whole job when a rank fails, and
// mpirun ends the job when a rank dies. Every collective of a Comm also
// waits at most the Comm's timeout (Config.Timeout; 10 minutes by default,
// or the Go duration in $WICK_DIST_TIMEOUT): past it the call returns an
// error, the Comm is broken, and the process should exit (see Abort).
//
// # Concurrency
//
// A Comm may be used from any goroutine, but its collectives are
// collective: every rank must call the same collectives in the same order,
// so a program calls them from one goroutine at a time (calls from several
// goroutines at once are serialised in an unspecified order). MPI is
// initialised and finalized on one locked OS thread; the collectives run on
// the calling goroutine's thread (MPI_THREAD_SERIALIZED), or on that locked
// thread where MPI provides only MPI_THREAD_FUNNELED.
package dist
