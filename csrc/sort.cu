// sort.cu: a stable sort of each row, with the positions the values came
// from (tensor's Sort, and through it TopK).
//
// Sort: vals[r, k] = the k-th element of row r of src in the order below,
//       idx[r, k] = its position in the row.
// The order: numbers as usual (-0 equals +0), NaN above every number;
// descending reverses it; equal elements keep their order in either
// direction (stable), so every element has a distinct rank.
//
// Shape legend: src, vals: (rows, cols) float contiguous; idx: (rows, cols)
// int64 contiguous.
// Launch: one thread per element, 1-D grid-stride over rows·cols. Each
// thread counts the elements of its row that come before it (its rank) and
// writes itself there: O(cols) work per thread, no synchronisation, and
// the same result under any grid.

#include "common.cuh"

// wick_sort_order compares a and b in the sort's order: -1, 0 or 1.
__device__ __forceinline__ int wick_sort_order(float a, float b) {
    bool an = a != a, bn = b != b;
    if (an && bn) return 0;
    if (an) return 1;
    if (bn) return -1;
    if (a < b) return -1;
    if (a > b) return 1;
    return 0;
}

// wick_sort_f32: vals, idx (rows, cols) = each row of src (rows, cols)
// sorted (descending != 0: largest first), stable.
extern "C" __global__ void wick_sort_f32(float* vals, i64* idx, const float* src, i64 rows, i64 cols,
                                         int descending) {
    for (i64 e = wick_tid(); e < rows * cols; e += wick_nthreads()) {
        i64 r = e / cols, i = e - r * cols;
        const float* row = src + r * cols;
        float x = row[i];
        i64 rank = 0;
        for (i64 j = 0; j < cols; j++) {
            int c = descending ? wick_sort_order(x, row[j]) : wick_sort_order(row[j], x);
            if (c < 0 || (c == 0 && j < i)) rank++;
        }
        vals[r * cols + rank] = x;
        idx[r * cols + rank] = i;
    }
}
