// norm.cu: the sum of squares of many float32 buffers in one launch (the
// global gradient norm of gradient clipping, like PyTorch's multi-tensor
// kernel).
//
// The buffers are cut into chunks on the host; chunk k is the ns[k]
// contiguous elements at ptrs[k]. Each block takes chunks blockIdx.x,
// blockIdx.x + gridDim.x, ... and writes the sum of the squares of their
// elements, in double, to part[blockIdx.x]; wick_reduce_final_f32 (with
// root = 1) then sums the blocks' partials and takes the square root.
//
// Shape legend: ptrs, ns: (nchunks,); part: (gridDim.x,) double.
// Launch: <<<min(nchunks, WICK_MAXBLOCKS), WICK_ROWTHREADS>>>.

#include "common.cuh"

// wick_sumsq_chunks_f32: part[b] = Σ over block b's chunks of Σ x².
extern "C" __global__ void wick_sumsq_chunks_f32(double* part, const unsigned long long* ptrs, const i64* ns,
                                                 i64 nchunks) {
    __shared__ double dbuf[WICK_ROWTHREADS];
    double acc = 0;
    for (i64 k = blockIdx.x; k < nchunks; k += gridDim.x) {
        const float* x = (const float*)ptrs[k];
        const i64 n = ns[k];
        for (i64 j = threadIdx.x; j < n; j += blockDim.x) {
            double v = (double)x[j];
            acc += v * v;
        }
    }
    acc = wick_block_sum(acc, dbuf);
    if (threadIdx.x == 0) part[blockIdx.x] = acc;
}
