/* Streaming JSON writer: escaped strings, locale-independent numbers, no NaN/Inf. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qnbench.h"

void qj_init(struct qnb_json *j, FILE *f)
{
    memset(j, 0, sizeof(*j));
    j->f = f;
    j->first[0] = 1;
}

static void sep(struct qnb_json *j)
{
    if (j->after_key) {
        j->after_key = 0;
        return;
    }
    if (!j->first[j->depth])
        fputs(", ", j->f);
    j->first[j->depth] = 0;
}

static void open_(struct qnb_json *j, char c)
{
    sep(j);
    fputc(c, j->f);
    if (j->depth < 63)
        j->depth++;
    j->first[j->depth] = 1;
}

static void close_(struct qnb_json *j, char c)
{
    if (j->depth > 0)
        j->depth--;
    fputc(c, j->f);
}

void qj_obj_begin(struct qnb_json *j) { open_(j, '{'); }
void qj_obj_end(struct qnb_json *j) { close_(j, '}'); }
void qj_arr_begin(struct qnb_json *j) { open_(j, '['); }
void qj_arr_end(struct qnb_json *j) { close_(j, ']'); }

/* Length of the well-formed UTF-8 sequence at p (RFC 3629 table 3-7: no overlong forms, no
 * surrogates, nothing past U+10FFFF), or 0 when the byte at p does not start one. */
static size_t utf8_len(const unsigned char *p)
{
    unsigned char b = p[0];
    size_t n;
    unsigned long u;
    if (b < 0x80)
        return 1;
    if (b >= 0xc2 && b <= 0xdf)
        n = 2, u = b & 0x1fu;
    else if (b >= 0xe0 && b <= 0xef)
        n = 3, u = b & 0x0fu;
    else if (b >= 0xf0 && b <= 0xf4)
        n = 4, u = b & 0x07u;
    else
        return 0;
    for (size_t i = 1; i < n; i++) { /* a NUL ends the string and fails this test too */
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        u = (u << 6) | (p[i] & 0x3fu);
    }
    if ((n == 3 && u < 0x800) || (n == 4 && (u < 0x10000 || u > 0x10ffff)) ||
        (u >= 0xd800 && u <= 0xdfff))
        return 0;
    return n;
}

/* A JSON string of the bytes s. Bytes that are not UTF-8 (a file name may hold any byte but
 * '/' and NUL) are written as the lone surrogates \udc80-\udcff of PEP 383's
 * "surrogateescape", so the document stays valid UTF-8 and Python reads the exact name back
 * with os.fsencode(). */
static void raw_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        case '\b': fputs("\\b", f); break;
        case '\f': fputs("\\f", f); break;
        default:
            if (*p < 0x20 || *p == 0x7f) {
                fprintf(f, "\\u%04x", *p);
            } else if (*p < 0x80) {
                fputc(*p, f);
            } else {
                size_t n = utf8_len(p);
                if (n == 0) {
                    fprintf(f, "\\udc%02x", *p);
                } else {
                    fwrite(p, 1, n, f);
                    p += n - 1;
                }
            }
        }
    }
    fputc('"', f);
}

void qj_key(struct qnb_json *j, const char *k)
{
    sep(j);
    raw_string(j->f, k);
    fputs(": ", j->f);
    j->after_key = 1;
}

void qj_str(struct qnb_json *j, const char *s)
{
    sep(j);
    raw_string(j->f, s ? s : "");
}

void qj_int(struct qnb_json *j, long long v)
{
    sep(j);
    fprintf(j->f, "%lld", v);
}

/* %.17g, then force '.' as decimal separator whatever LC_NUMERIC says. */
void qnb_format_double(char *buf, size_t len, double v)
{
    /* shortest of %.15g/%.16g/%.17g that reads back exactly */
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, len, "%.*g", prec, v);
        for (char *p = buf; *p; p++)
            if (*p == ',')
                *p = '.';
        if (strtod(buf, NULL) == v)
            break;
    }
    for (char *p = buf; *p; p++)
        if (*p == ',')
            *p = '.';
    /* make sure a float stays a float for readers that care */
    if (!strpbrk(buf, ".eEn"))
        strncat(buf, ".0", len - strlen(buf) - 1);
}

void qj_num(struct qnb_json *j, double v)
{
    char buf[64];
    sep(j);
    if (!isfinite(v)) {
        fputs("null", j->f);
        return;
    }
    qnb_format_double(buf, sizeof buf, v);
    fputs(buf, j->f);
}

void qj_bool(struct qnb_json *j, int v)
{
    sep(j);
    fputs(v ? "true" : "false", j->f);
}

void qj_null(struct qnb_json *j)
{
    sep(j);
    fputs("null", j->f);
}

void qj_kstr(struct qnb_json *j, const char *k, const char *s) { qj_key(j, k); qj_str(j, s); }
void qj_kint(struct qnb_json *j, const char *k, long long v) { qj_key(j, k); qj_int(j, v); }
void qj_knum(struct qnb_json *j, const char *k, double v) { qj_key(j, k); qj_num(j, v); }
void qj_kbool(struct qnb_json *j, const char *k, int v) { qj_key(j, k); qj_bool(j, v); }

/* Insert already-formatted JSON text as one value. */
void qj_raw(struct qnb_json *j, const char *text)
{
    sep(j);
    fputs(text, j->f);
}
