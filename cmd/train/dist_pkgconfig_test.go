//go:build mpi && !mpicc

package main

// mpiBuildTags are the tags this test binary was built with, for the train
// binary the MPI tests build.
const mpiBuildTags = "mpi"
