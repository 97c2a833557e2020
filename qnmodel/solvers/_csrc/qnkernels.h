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

#define QNK_ABI_VERSION 2

#if defined(_WIN32)
#define QNK_API __declspec(dllexport)
#else
#define QNK_API __attribute__((visibility("default")))
#endif

/* ABI version of this library (QNK_ABI_VERSION). */
QNK_API int qnk_abi_version(void);

/* Single-class exact MVA (Reiser-Lavenberg), n = 1..N.
 *   D[K]   demands; Dq[K] = D at queueing stations, 0 at delay stations.
 *   keep_all: 1 -> X[N], Rk[N*K] for every n; 0 -> X[1], Rk[K] for n = N. */
QNK_API int qnk_mva_single(int64_t K, const double *D, const double *Dq, double Z, int64_t N,
                           int keep_all, double *X, double *Rk);

/* Single-class exact MVA, the whole curve n = 1..N in one pass, written straight into
 * the caller's arrays (no temporaries): n_out[N] = n, X[N], R[N] = sum_k R_k, and
 * Rk, Q, U [N*K] with Q_k = X R_k and U_k = X Du_k (Du = D / m, the per-server demand).
 * D, Dq as in qnk_mva_single. */
QNK_API int qnk_mva_curve(int64_t K, const double *D, const double *Dq, const double *Du,
                          double Z, int64_t N, double *n_out, double *X, double *R,
                          double *Rk, double *Q, double *U);

/* Exact single-class MVA with ONE multi-server station s (m >= 2 servers) and any
 * number of single-server queues and delays, O(N (K + min(m, N))): the idle
 * probability of s from the complement network, p_s(0|n) = p_s(0|n-1) X(n) / X_c(n),
 * and p_s(j|n) = (D_s X(n) / j) p_s(j-1|n-1) for j < m-1; no subtraction anywhere
 * (see mva_load_dependent in qnmodel/solvers/mva.py for the derivation).
 * D, Dq, Du as in qnk_mva_curve (Dq[s] is ignored). keep_all: 1 -> rows n = 1..N of
 * X[N], R[N], Rk/Q/U[N*K]; 0 -> one row for n = N. */
QNK_API int qnk_mva_ld1(int64_t K, const double *D, const double *Dq, const double *Du,
                        double Z, int64_t N, int64_t s, int64_t m, int keep_all, double *X,
                        double *R, double *Rk, double *Q, double *U);

/* One pass of the subset form of the complement recursion (L >= 1 multi-server
 * stations idx[L] with m[L] servers; stations outside the subset have D = Dq = 0):
 * Tc[L*N] holds, for each idx[i], the cycle time T_{S-k}(n) = n / X_{S-k}(n) of the
 * subset without it (0 for an empty network). Writes T[N] = n / X(n) of this subset,
 * and mode 1: rows n = 1..N of X, R, Rk, Q, U; mode 2: one row for n = N; mode 0: T only. */
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
