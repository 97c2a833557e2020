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

#define QNK_ABI_VERSION 4

#if defined(_WIN32)
#define QNK_API __declspec(dllexport)
#else
#define QNK_API __attribute__((visibility("default")))
/* Log-space convolution: out[n] = log sum_{j=0..n} exp(la[j] + lb[n-j]), n = 0..L-1
 * (inputs of length L, entries may be -inf): O(L^2), no overflow, no cancellation;
 * terms 60 or more below the largest of their sum are skipped (< 1e-17 relative). */
QNK_API int qnk_log_convolve(int64_t L, const double *la, const double *lb, double *out);

/* Mean queue length of a load-dependent station from log factors:
 * out[i] = sum_{j=1..n} j exp(lf[j] + comp[n-j] - lG[n]), n = nidx[i] (i < nout), with
 * the same cut as qnk_log_convolve (absolute error below n^2 exp(-60)). */
QNK_API int qnk_log_moment(int64_t nout, const int64_t *nidx, const double *lf,
                           const double *comp, const double *lG, double *out);

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

/* Exact single-class MVA with L >= 1 multi-server stations idx[L] (m[L] >= 2 servers
 * each) besides single-server queues and delays: the complement recursion, the one
 * load-dependent kernel (one multi-server station is L = 1). Every subset S of the
 * multi-server stations (with all load-independent stations and Z) takes one step per n,
 * then the marginals of every subset move to n with the throughputs X_{S-k}(n) of its
 * subsets: p_k(0|n) = p_k(0|n-1) X_S(n) / X_{S-k}(n), p_k(j|n) = (D_k X_S(n) / j)
 * p_k(j-1|n-1) for j < m-1, and R_k(n) = (D_k/m)(1 + Q_k(n-1) + sum_j (m-1-j)
 * p_k(j|n-1)); no subtraction anywhere (derivation: mva_load_dependent in
 * qnmodel/solvers/mva_ld.py). O(2^L N (K + L m)) time, O(2^L (K + L m)) memory.
 * D, Dq, Du as in qnk_mva (one network). keep_all: 1 -> rows n = 1..N of X[N], R[N],
 * Rk/Q/U[N*K]; 0 -> one row for n = N. */
QNK_API int qnk_mva_ld(int64_t K, const double *D, const double *Dq, const double *Du,
                       double Z, int64_t N, int64_t L, const int64_t *idx, const int64_t *m,
                       int keep_all, double *X, double *R, double *Rk, double *Q, double *U);

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

/* Log-space convolution: out[n] = log sum_{j=0..n} exp(la[j] + lb[n-j]), n = 0..L-1
 * (inputs of length L, entries may be -inf): O(L^2), no overflow, no cancellation;
 * terms 60 or more below the largest of their sum are skipped (< 1e-17 relative). */
QNK_API int qnk_log_convolve(int64_t L, const double *la, const double *lb, double *out);

/* Mean queue length of a load-dependent station from log factors:
 * out[i] = sum_{j=1..n} j exp(lf[j] + comp[n-j] - lG[n]), n = nidx[i] (i < nout), with
 * the same cut as qnk_log_convolve (absolute error below n^2 exp(-60)). */
QNK_API int qnk_log_moment(int64_t nout, const int64_t *nidx, const double *lf,
                           const double *comp, const double *lG, double *out);

#endif
