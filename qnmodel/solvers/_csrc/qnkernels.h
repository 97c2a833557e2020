/* qnkernels: compiled inner recursions of qnmodel's queueing-network solvers.
 *
 * A plain C11 shared library (no Python headers), loaded with ctypes by
 * qnmodel/solvers/_kernels.py. Every function mirrors a pure-numpy routine of
 * the package that gives the same results; arrays are C-contiguous float64 /
 * int64, sizes are int64. Functions return 0 on success, a positive status
 * for a documented outcome, and -1 when memory could not be allocated.
 */
#ifndef QNKERNELS_H
#define QNKERNELS_H

#include <stdint.h>

#define QNK_ABI_VERSION 3

#if defined(_WIN32)
#define QNK_API __declspec(dllexport)
#else
#define QNK_API __attribute__((visibility("default")))
#endif

/* ABI version of this library (QNK_ABI_VERSION). */
QNK_API int qnk_abi_version(void);

/* Batched single-class exact MVA (Reiser-Lavenberg) of P networks of K stations each,
 * n = 1..N; the one kernel behind mva_exact, the what-if sweep and the load-independent
 * part of the log-space convolution.
 *   D, Dq [P*K]: demands; Dq = D at queueing stations, 0 at delay stations.
 *   Du [P*K] or NULL: per-server demands D / m, for U_k = X Du_k.  Z [P]: think times.
 *   pops: NULL -> keep every n = 1..nout (N = nout); else nout strictly increasing
 *   populations >= 1 to keep (N = pops[nout-1]).
 * Outputs, row i of point p at p*nout + i, each optional (NULL: not written):
 *   X, R [P*nout] (R = sum_k R_k), Rk, Q, U [P*nout*K] (Q_k = X R_k, U_k = X Du_k). */
QNK_API int qnk_mva(int64_t P, int64_t K, const double *D, const double *Dq, const double *Du,
                    const double *Z, int64_t nout, const int64_t *pops, double *X, double *R,
                    double *Rk, double *Q, double *U);

/* One pass of the subset form of the complement recursion, the one load-dependent
 * kernel: L >= 0 multi-server stations idx[L] with m[L] >= 2 servers (L = 0: the network
 * of the load-independent stations alone; one multi-server station is L = 1 after that
 * pass); stations outside the subset have D = Dq = 0.
 * Tc[L*N] holds, for each idx[i], the cycle time T_{S-k}(n) = n / X_{S-k}(n) of the
 * subset without it (0 for an empty network). Writes T[N] = n / X(n) of this subset,
 * and mode 1: rows n = 1..N of X, R, Rk, Q, U; mode 2: one row for n = N; mode 0: T only.
 * The idle probability of station k is p_k(0|n) = p_k(0|n-1) X_S(n) / X_{S-k}(n) and
 * p_k(j|n) = (D_k X_S(n) / j) p_k(j-1|n-1) for j < m-1: no subtraction anywhere (see
 * mva_load_dependent in qnmodel/solvers/mva_ld.py for the derivation). */
QNK_API int qnk_mva_ldn(int64_t K, const double *D, const double *Dq, const double *Du,
                        double Z, int64_t N, int64_t L, const int64_t *idx, const int64_t *m,
                        const double *Tc, int mode, double *T, double *X, double *R,
                        double *Rk, double *Q, double *U);

/* Multi-class exact MVA over the population lattice, result at N.
 *   N[C] >= 1 each; D, Dq [C*K]; Z[C]. Output X[C], R[C*K].
 *   Memory: two slices of the lattice along the most populous class. */
QNK_API int qnk_mva_multiclass(int64_t C, int64_t K, const int64_t *N, const double *D,
                               const double *Dq, const double *Z, double *X, double *R);

/* Approximate-MVA core at population M[C] (reals >= 0), Schweitzer-Bard when
 * Dlt is NULL, Linearizer core otherwise (Dlt[C*C*K] = delta_{c,j,k}).
 * Q[C*K] holds the initial guess and receives the solution; X[C], R[C*K].
 * Returns 0 when the relative change fell below tol, 1 after max_iter. */
QNK_API int qnk_amva_core(int64_t C, int64_t K, const double *M, const double *D,
                          const double *Dq, const double *Z, const double *Dlt, double *Q,
                          double tol, int64_t max_iter, double *X, double *R, int64_t *iters,
                          double *resid);

#endif
