// scan.cu: running sums and products along each row (tensor's Cumsum and
// Cumprod, and their backward passes, which scan from the row's end).
//
// Scan: dst[r, j] = Σ (or Π) of src[r, 0..j], or of src[r, j..cols-1] when
// reverse; accumulated in double and rounded to float at each element, as
// the CPU backend does.
//
// Shape legend: src, dst: (rows, cols) float contiguous.
// Launch: one thread per row, 1-D grid-stride over rows.

#include "common.cuh"

// wick_scan_f32: dst (rows, cols) = running sum (prod == 0) or product
// (prod != 0) of each row of src (rows, cols).
extern "C" __global__ void wick_scan_f32(float* dst, const float* src, i64 rows, i64 cols, int prod,
                                         int reverse) {
    for (i64 r = wick_tid(); r < rows; r += wick_nthreads()) {
        double acc = prod ? 1.0 : 0.0;
        for (i64 k = 0; k < cols; k++) {
            i64 j = r * cols + (reverse ? cols - 1 - k : k);
            double v = src[j];
            acc = prod ? acc * v : acc + v;
            dst[j] = (float)acc;
        }
    }
}
