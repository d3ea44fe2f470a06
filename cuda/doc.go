// Package cuda is Wick's GPU backend: tensors on tensor.CUDA(i) run every
// operation as a kernel on an NVIDIA GPU, queued in order on one stream, so
// that Go code runs ahead of the device and only host reads (Float32s,
// Item, printing) wait for it.
//
// The backend is compiled only with the cuda build tag:
//
//	go build -tags cuda ./...
//
// A binary built so links libcuda.so.1 (the NVIDIA driver) and nothing else
// from CUDA: cuBLAS is loaded at run time with dlopen ($WICK_CUBLAS, else
// the newest of libcublas.so.13, .12, .11 on the loader's path, else in the
// NVIDIA wheels of a pip-installed PyTorch; BLASLibrary says which file),
// and the kernels ship inside the binary
// as PTX that the driver compiles for the GPU at start-up. Such a binary
// needs the driver library to load, but it starts on a machine without a
// GPU (or with a driver that fails to initialise): Available then reports
// false and every device request returns an error that names the driver's
// reason, such as "cuda: the NVIDIA driver found no usable GPU (cuInit:
// CUDA_ERROR_NO_DEVICE)". (gorgonia.org/cu initialises the driver when the
// program starts and exits if it cannot; cuinit.c interposes the driver's
// cuInit so that the program goes on.) The default build, without the tag,
// is the CPU-only one: there this package is a stub whose Available reports
// false and whose functions return ErrNotBuilt, and package tensor answers
// requests for CUDA devices with an error that says how to build with GPU
// support.
//
// Importing the package (for its side effect, import _ ".../cuda") registers
// the backend with package tensor:
//
//	dev, err := cuda.Open(0)  // or tensor.CUDA(0), opened on first use
//	if err != nil { ... }
//	tensor.SetDefaultDevice(dev)
//	x := tensor.Randn(64, 384) // on the GPU
//	y := cpuTensor.To(dev)
//
// Kernels live in csrc/ (CUDA C, one file per concept); `go generate
// ./cuda` writes csrc/unary_ops.cuh from the unary op table of
// tensor/unary_ops.go and rebuilds kernels.ptx with nvcc (gen.go), and the
// results are committed, so building needs no CUDA compiler. Device memory comes from
// a caching allocator (see Memory, EmptyCache); it is given back when a
// tensor's storage becomes unreachable or when Tensor.Release is called.
package cuda

//go:generate go run gen.go
