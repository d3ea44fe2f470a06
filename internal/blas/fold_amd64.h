// FOLD16 adds the sixteen lanes of Z0 into the low lane of X0: the upper
// eight onto the lower, then pairwise twice, then the two 128-bit halves
// (Y15/X15 scratch). The one-row kernels fold every row's sum this way, so
// that they share its bits.
#define FOLD16 \
	VEXTRACTF64X4 $1, Z0, Y15 ; \
	VADDPS        Y15, Y0, Y0 ; \
	VHADDPS       Y0, Y0, Y0  ; \
	VHADDPS       Y0, Y0, Y0  ; \
	VEXTRACTF128  $1, Y0, X15 ; \
	VADDSS        X15, X0, X0
