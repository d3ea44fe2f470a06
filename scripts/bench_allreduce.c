/* bench_allreduce.c: the yardstick of scripts/bench_dist.sh, a bare loop of
 * MPI_Allreduce (MPI_SUM, in place) of N floats.
 *
 *   mpicc -O2 -o bench_allreduce scripts/bench_allreduce.c
 *   mpirun -np 2 ./bench_allreduce N ITERS
 *
 * Rank 0 prints "bare MPI_Allreduce: N floats: median X ms, mean Y ms" of
 * ITERS timed calls after 10 untimed ones. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	int n = argc > 1 ? atoi(argv[1]) : 1000000;
	int iters = argc > 2 ? atoi(argv[2]) : 100;
	float *buf = calloc(n > 0 ? n : 1, sizeof(float));
	double *t = malloc(sizeof(double) * iters);
	for (int i = 0; i < 10; i++) MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	for (int i = 0; i < iters; i++) {
		double t0 = MPI_Wtime();
		MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
		t[i] = MPI_Wtime() - t0;
	}
	double sum = 0;
	for (int i = 0; i < iters; i++) sum += t[i];
	qsort(t, iters, sizeof(double), cmp);
	if (rank == 0) printf("bare MPI_Allreduce: %d floats: median %.3f ms, mean %.3f ms\n", n, 1e3 * t[iters / 2], 1e3 * sum / iters);
	free(buf);
	free(t);
	MPI_Finalize();
	return 0;
}
