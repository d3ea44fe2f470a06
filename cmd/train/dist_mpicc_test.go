//go:build mpi && mpicc

package main

// mpiBuildTags are the tags this test binary was built with, for the train
// binary the MPI tests build (CC=mpicc comes through the environment).
const mpiBuildTags = "mpi,mpicc"
