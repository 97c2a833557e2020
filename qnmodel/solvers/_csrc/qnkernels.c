/* qnkernels.c: see qnkernels.h. References for the recursions:
 *   M. Reiser, S. S. Lavenberg, J. ACM 27(2):313-322, 1980 (exact MVA);
 *   P. J. Schweitzer (1979), Y. Bard (1979) (approximate MVA);
 *   K. M. Chandy, D. Neuse, CACM 25(2):126-134, 1982 (Linearizer). */
#include "qnkernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int qnk_abi_version(void) { return QNK_ABI_VERSION; }

/* Sum of x[0..n-1] with four partial sums (pipelines the additions). */
static double sum4(const double *x, int64_t n) {
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += x[i];
        s1 += x[i + 1];
        s2 += x[i + 2];
        s3 += x[i + 3];
    }
    for (; i < n; i++) s0 += x[i];
    return (s0 + s1) + (s2 + s3);
}

int qnk_mva(int64_t P, int64_t K, const double *D, const double *Dq, const double *Du,
            const double *Z, int64_t nout, const int64_t *pops, double *X, double *R,
            double *Rk, double *Q, double *U) {
    /* Kept rows are written straight into the caller's arrays, once each; the kept row of
     * Q (or, between kept rows, the scratch q) is the recursion's state for n + 1. */
    double *scratch = calloc((size_t)(3 * K > 0 ? 3 * K : 1), sizeof(double));
    if (scratch == NULL) return -1;
    const double *zero = scratch;
    double *rs = scratch + K, *qs = scratch + 2 * K;
    const int64_t N = (pops == NULL) ? nout : (nout > 0 ? pops[nout - 1] : 0);
    for (int64_t p = 0; p < P; p++) {
        const double *Dp = D + p * K, *Dqp = Dq + p * K, *Dup = Du ? Du + p * K : NULL;
        const double *qp = zero; /* Q_k(0) = 0 */
        int64_t next = 0;        /* index into pops of the next kept population */
        for (int64_t n = 1; n <= N; n++) {
            int64_t i = -1; /* output row of this n, or -1 */
            if (pops == NULL) i = n - 1;
            else if (pops[next] == n) i = next++;
            const int64_t at = p * nout + i;
            double *r = (i >= 0 && Rk) ? Rk + at * K : rs;
            double *q = (i >= 0 && Q) ? Q + at * K : qs;
            /* [RL80]: R_k(n) = D_k (1 + Q_k(n-1)) at queues, D_k at delays */
            for (int64_t k = 0; k < K; k++) r[k] = Dqp[k] * qp[k] + Dp[k];
            double s = sum4(r, K);
            double x = (double)n / (Z[p] + s); /* X(n) = n / (Z + R(n)) */
            if (i >= 0 && U && Dup) {
                double *u = U + at * K;
                for (int64_t k = 0; k < K; k++) {
                    q[k] = r[k] * x;
                    u[k] = x * Dup[k];
                }
            } else {
                for (int64_t k = 0; k < K; k++) q[k] = r[k] * x;
            }
            qp = q;
            if (i >= 0) {
                if (X) X[at] = x;
                if (R) R[at] = s;
            }
        }
    }
    free(scratch);
    return 0;
}

int qnk_mva_ld(int64_t K, const double *D, const double *Dq, const double *Du, double Z,
               int64_t N, int64_t L, const int64_t *idx, const int64_t *m, int keep_all,
               double *X, double *R, double *Rk, double *Q, double *U) {
    /* Subset S (bit mask over idx) = the load-independent stations plus the multi-server
     * stations in S. Its state: Q_k(n-1) at q[S*K..], and for each i in S the marginals
     * p_i(j | n-1), j = 0..Lk_i-1, at p[S*P + off[i]..]. xs[S] = X_S(n) (0: empty S). */
    const int64_t M = (int64_t)1 << L;
    int64_t *off = malloc((size_t)(L + 1) * sizeof(int64_t));
    if (off == NULL) return -1;
    off[0] = 0;
    for (int64_t i = 0; i < L; i++) off[i + 1] = off[i] + ((m[i] - 1 < N) ? m[i] - 1 : N);
    const int64_t P = off[L] > 0 ? off[L] : 1;
    double *Dm = malloc((size_t)(2 * M * K) * sizeof(double)); /* D, Dq of each subset */
    double *q = calloc((size_t)(M * K), sizeof(double));
    double *r = malloc((size_t)(K > 0 ? K : 1) * sizeof(double));
    double *p = calloc((size_t)(M * P), sizeof(double));
    double *xs = calloc((size_t)M, sizeof(double));
    double *dm = malloc((size_t)L * sizeof(double)); /* D_k / m_k, once */
    int status = -1;
    if (Dm == NULL || q == NULL || r == NULL || p == NULL || xs == NULL || dm == NULL) goto done;
    for (int64_t i = 0; i < L; i++) dm[i] = D[idx[i]] / (double)m[i];
    for (int64_t S = 0; S < M; S++) {
        double *DS = Dm + 2 * S * K, *DqS = DS + K;
        memcpy(DS, D, (size_t)K * sizeof(double));
        memcpy(DqS, Dq, (size_t)K * sizeof(double));
        for (int64_t i = 0; i < L; i++) {
            if (S >> i & 1) p[S * P + off[i]] = 1.0; /* p_i(0 | 0) = 1 */
            else DS[idx[i]] = DqS[idx[i]] = 0.0;     /* station i is not in S */
        }
    }
    for (int64_t n = 1; n <= N; n++) {
        /* 1. every subset's step n from its state at n - 1 (no subset needs another's);
         *    the whole network first, whose rows are the result */
        for (int64_t S = M - 1; S >= 0; S--) {
            const double *DS = Dm + 2 * S * K, *DqS = DS + K;
            double *qS = q + S * K, *pS = p + S * P;
            for (int64_t k = 0; k < K; k++) r[k] = DqS[k] * qS[k] + DS[k];
            for (int64_t i = 0; i < L; i++) {
                if (!(S >> i & 1)) continue;
                const int64_t k = idx[i], Lk = off[i + 1] - off[i];
                const double *pk = pS + off[i];
                double w = 0.0;
                for (int64_t j = 0; j < Lk; j++) w += (double)(m[i] - 1 - j) * pk[j];
                r[k] = dm[i] * ((1.0 + qS[k]) + w);
            }
            double sum = sum4(r, K);
            xs[S] = 0.0;
            if (Z + sum == 0.0) continue; /* the empty network: X = 0, state stays 0 */
            double x = (double)n / (Z + sum);
            xs[S] = x;
            for (int64_t k = 0; k < K; k++) qS[k] = r[k] * x;
            if (S == M - 1 && (keep_all || n == N)) {
                const int64_t row = keep_all ? n - 1 : 0;
                double *rk = Rk + row * K, *qq = Q + row * K, *u = U + row * K;
                for (int64_t k = 0; k < K; k++) {
                    rk[k] = r[k];
                    qq[k] = qS[k];
                    u[k] = x * Du[k];
                }
                X[row] = x;
                R[row] = sum;
            }
        }
        /* 2. the marginals at n, now that X_{S-i}(n) of every subset is known */
        for (int64_t S = 1; S < M; S++) {
            const double x = xs[S];
            double *pS = p + S * P;
            for (int64_t i = 0; i < L; i++) {
                if (!(S >> i & 1)) continue;
                const int64_t Lk = off[i + 1] - off[i];
                double *pk = pS + off[i];
                const double xc = xs[S & ~((int64_t)1 << i)];
                double ratio = (xc > 0.0) ? x / xc : 0.0; /* X_S(n) / X_{S-i}(n) */
                double c = D[idx[i]] * x;
                for (int64_t j = Lk - 1; j >= 1; j--) pk[j] = (c / (double)j) * pk[j - 1];
                pk[0] = pk[0] * ratio;
            }
        }
    }
    status = 0;
done:
    free(off);
    free(Dm);
    free(q);
    free(r);
    free(p);
    free(xs);
    free(dm);
    return status;
}

int qnk_mva_multiclass(int64_t C, int64_t K, const int64_t *N, const double *D,
                       const double *Dq, const double *Z, double *X, double *R) {
    /* Outer class o = most populous; the others form a mixed-radix slice. */
    int64_t o = 0;
    for (int64_t c = 1; c < C; c++)
        if (N[c] > N[o]) o = c;
    int64_t *stride = calloc((size_t)C, sizeof(int64_t));
    int64_t *cnt = calloc((size_t)C, sizeof(int64_t));
    if (stride == NULL || cnt == NULL) {
        free(stride);
        free(cnt);
        return -1;
    }
    int64_t S = 1;
    for (int64_t c = C - 1; c >= 0; c--) {
        if (c == o) continue;
        stride[c] = S;
        S *= N[c] + 1;
    }
    double *buf = malloc((size_t)(2 * S * K + K) * sizeof(double));
    if (buf == NULL) {
        free(stride);
        free(cnt);
        return -1;
    }
    double *slice[2] = {buf, buf + S * K};
    double *r = buf + 2 * S * K;
    for (int64_t a = 0; a <= N[o]; a++) {
        double *cur = slice[a & 1];
        const double *prev = slice[(a + 1) & 1];
        memset(cnt, 0, (size_t)C * sizeof(int64_t));
        cnt[o] = a;
        for (int64_t idx = 0; idx < S; idx++) {
            double *Qrow = cur + idx * K;
            memset(Qrow, 0, (size_t)K * sizeof(double));
            int last = (a == N[o]) && (idx == S - 1);
            for (int64_t c = 0; c < C; c++) {
                if (cnt[c] == 0) continue;
                const double *Qp = (c == o) ? prev + idx * K : cur + (idx - stride[c]) * K;
                const double *Dc = D + c * K, *Dqc = Dq + c * K;
                for (int64_t k = 0; k < K; k++) r[k] = Dqc[k] * Qp[k] + Dc[k];
                double x = (double)cnt[c] / (Z[c] + sum4(r, K));
                for (int64_t k = 0; k < K; k++) Qrow[k] += x * r[k];
                if (last) {
                    X[c] = x;
                    memcpy(R + c * K, r, (size_t)K * sizeof(double));
                }
            }
            /* next point of the slice: mixed radix, class with stride 1 fastest */
            for (int64_t c = C - 1; c >= 0; c--) {
                if (c == o) continue;
                if (++cnt[c] <= N[c]) break;
                cnt[c] = 0;
            }
        }
    }
    free(buf);
    free(stride);
    free(cnt);
    return 0;
}

int qnk_amva_core(int64_t C, int64_t K, const double *M, const double *D, const double *Dq,
                  const double *Z, const double *Dlt, double *Q, double tol, int64_t max_iter,
                  double *X, double *R, int64_t *iters, double *resid) {
    double *T = malloc((size_t)K * sizeof(double));
    double *F = malloc((size_t)(C * K) * sizeof(double));
    double *Qn = malloc((size_t)(C * K) * sizeof(double));
    if (T == NULL || F == NULL || Qn == NULL) {
        free(T);
        free(F);
        free(Qn);
        return -1;
    }
    int status = 1;
    double res = INFINITY;
    int64_t it = 0;
    while (it < max_iter) {
        it++;
        for (int64_t k = 0; k < K; k++) T[k] = 0.0;
        for (int64_t j = 0; j < C; j++) {
            const double *Qj = Q + j * K;
            double inv = M[j] > 0.0 ? 1.0 / M[j] : 0.0;
            for (int64_t k = 0; k < K; k++) {
                T[k] += Qj[k];
                F[j * K + k] = Qj[k] * inv;
            }
        }
        for (int64_t c = 0; c < C; c++) {
            double *Rc = R + c * K;
            const double *Dc = D + c * K, *Dqc = Dq + c * K;
            if (M[c] <= 0.0) {
                X[c] = 0.0;
                for (int64_t k = 0; k < K; k++) {
                    Rc[k] = Dc[k];
                    Qn[c * K + k] = 0.0;
                }
                continue;
            }
            if (Dlt == NULL) {
                const double *Fc = F + c * K;
                for (int64_t k = 0; k < K; k++) Rc[k] = Dqc[k] * (T[k] - Fc[k]) + Dc[k];
            } else {
                for (int64_t k = 0; k < K; k++) Rc[k] = 0.0;
                for (int64_t j = 0; j < C; j++) {
                    double w = M[j] - (j == c ? 1.0 : 0.0);
                    if (w <= 0.0) continue;
                    const double *Fj = F + j * K, *Dl = Dlt + (c * C + j) * K;
                    for (int64_t k = 0; k < K; k++) Rc[k] += w * (Fj[k] + Dl[k]);
                }
                for (int64_t k = 0; k < K; k++) Rc[k] = Dqc[k] * Rc[k] + Dc[k];
            }
            double x = M[c] / (Z[c] + sum4(Rc, K));
            X[c] = x;
            for (int64_t k = 0; k < K; k++) Qn[c * K + k] = x * Rc[k];
        }
        res = 0.0;
        for (int64_t i = 0; i < C * K; i++) {
            if (Qn[i] > 0.0) {
                double e = fabs(Qn[i] - Q[i]) / Qn[i];
                if (e > res) res = e;
            }
        }
        memcpy(Q, Qn, (size_t)(C * K) * sizeof(double));
        if (res < tol) {
            status = 0;
            break;
        }
    }
    *iters = it;
    *resid = res;
    free(T);
    free(F);
    free(Qn);
    return status;
}

/* Log-space convolution and moments (log-space convolution of the station factors of
 * load-dependent stations: J. P. Buzen, CACM 16(9):527-531, 1973; see mva_ld.py).
 * Terms more than QNK_LOG_CUT below the largest term of their sum are not added: each
 * is below exp(-60) = 8.8e-27 of that term, so together they change a sum of at most
 * 10^9 terms by less than 1e-17 relative, below the rounding of one addition. */
#define QNK_LOG_CUT 60.0

/* Largest of la[j] + lb[n-j], j = 0..n, with four running maxima. */
static double max_diag(const double *la, const double *lb, int64_t n) {
    double m0 = -INFINITY, m1 = -INFINITY, m2 = -INFINITY, m3 = -INFINITY;
    int64_t j = 0;
    for (; j + 4 <= n + 1; j += 4) {
        double t0 = la[j] + lb[n - j], t1 = la[j + 1] + lb[n - j - 1];
        double t2 = la[j + 2] + lb[n - j - 2], t3 = la[j + 3] + lb[n - j - 3];
        m0 = t0 > m0 ? t0 : m0;
        m1 = t1 > m1 ? t1 : m1;
        m2 = t2 > m2 ? t2 : m2;
        m3 = t3 > m3 ? t3 : m3;
    }
    for (; j <= n; j++) {
        double t = la[j] + lb[n - j];
        m0 = t > m0 ? t : m0;
    }
    m0 = m1 > m0 ? m1 : m0;
    m2 = m3 > m2 ? m3 : m2;
    return m2 > m0 ? m2 : m0;
}

/* 1 when x[0..L-1] is concave on its support (a run of finite values, -inf outside),
 * up to rounding: second differences at most 64 eps times the values' magnitude. */
static int log_concave(const double *x, int64_t L) {
    int64_t a = 0, b = L - 1;
    while (a < L && !(x[a] > -INFINITY)) a++;
    while (b >= 0 && !(x[b] > -INFINITY)) b--;
    for (int64_t i = a; i <= b; i++)
        if (!(x[i] > -INFINITY) || !isfinite(x[i])) return 0;
    for (int64_t i = a + 1; i < b; i++) {
        double d2 = x[i + 1] - 2.0 * x[i] + x[i - 1];
        double tol = 64.0 * 2.220446049250313e-16 * (fabs(x[i - 1]) + 2.0 * fabs(x[i]) + fabs(x[i + 1]));
        if (d2 > tol) return 0;
    }
    return 1;
}

/* For log-concave la and lb the terms t_j = la[j] + lb[n-j] are unimodal in j and their
 * peak j*(n) does not decrease with n (the sum of concave sequences; supermodularity),
 * so the peak is tracked by hill climbing from the previous one and each sum adds the
 * terms outward from the peak until they fall 60 below it: O(window) per n instead of
 * O(n). Returns the log-sum at n (and updates *jstar); weight != 0 returns instead
 * sum_j j exp(t_j - shift); NAN when the climb ends on -inf (the caller then sums every
 * term). */
static double unimodal_sum(const double *la, const double *lb, int64_t n, int64_t *jstar,
                           double shift, int weight) {
    int64_t j = *jstar < n ? *jstar : n;
    if (j < 0) j = 0;
    while (j < n && la[j + 1] + lb[n - j - 1] >= la[j] + lb[n - j]) j++;
    while (j > 0 && la[j - 1] + lb[n - j + 1] > la[j] + lb[n - j]) j--;
    *jstar = j;
    double m = la[j] + lb[n - j];
    if (!(m > -INFINITY)) return NAN; /* no finite peak found here: the caller sums all */
    double lo = m - QNK_LOG_CUT;
    if (weight) {
        double s = 0.0;
        for (int64_t i = j; i >= 1; i--) {
            double t = la[i] + lb[n - i];
            if (!(t > lo)) break;
            s += (double)i * exp(t - shift);
        }
        for (int64_t i = j + 1; i <= n; i++) {
            double t = la[i] + lb[n - i];
            if (!(t > lo)) break;
            s += (double)i * exp(t - shift);
        }
        return s;
    }
    double s = 1.0;
    for (int64_t i = j - 1; i >= 0; i--) {
        double t = la[i] + lb[n - i];
        if (!(t > lo)) break;
        s += exp(t - m);
    }
    for (int64_t i = j + 1; i <= n; i++) {
        double t = la[i] + lb[n - i];
        if (!(t > lo)) break;
        s += exp(t - m);
    }
    return m + log(s);
}

int qnk_log_convolve(int64_t L, const double *la, const double *lb, double *out) {
    int concave = log_concave(la, L) && log_concave(lb, L);
    int64_t jstar = 0;
    for (int64_t n = 0; n < L; n++) {
        if (concave) {
            double v = unimodal_sum(la, lb, n, &jstar, 0.0, 0);
            if (!isnan(v)) {
                out[n] = v;
                continue;
            }
        }
        double m = max_diag(la, lb, n);
        if (!(m > -INFINITY)) {
            out[n] = -INFINITY;
            continue;
        }
        double lo = m - QNK_LOG_CUT, s = 0.0;
        for (int64_t j = 0; j <= n; j++) {
            double t = la[j] + lb[n - j];
            if (t > lo) s += exp(t - m);
        }
        out[n] = m + log(s);
    }
    return 0;
}

int qnk_log_moment(int64_t nout, const int64_t *nidx, const double *lf, const double *comp,
                   const double *lG, double *out) {
    int64_t L = 0;
    for (int64_t i = 0; i < nout; i++) L = nidx[i] + 1 > L ? nidx[i] + 1 : L;
    int concave = log_concave(lf, L) && log_concave(comp, L);
    int64_t jstar = 0;
    for (int64_t i = 0; i < nout; i++) {
        int64_t n = nidx[i];
        if (concave && (i == 0 || n >= nidx[i - 1])) {
            double v = unimodal_sum(lf, comp, n, &jstar, lG[n], 1);
            if (!isnan(v)) {
                out[i] = v;
                continue;
            }
        }
        double m = max_diag(lf, comp, n) - lG[n];
        double lo = m - QNK_LOG_CUT, s = 0.0;
        for (int64_t j = 1; j <= n; j++) {
            double t = lf[j] + comp[n - j] - lG[n];
            if (t > lo) s += (double)j * exp(t);
        }
        out[i] = s;
    }
    return 0;
}
