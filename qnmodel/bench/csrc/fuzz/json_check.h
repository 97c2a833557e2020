/* A strict RFC 8259 JSON reader for the fuzz targets: checks that a text is exactly one JSON
 * value (UTF-8 validated, no NaN/Infinity, no trailing garbage) and decodes strings, so a
 * target can compare what the writer was given with what a reader gets back.
 *
 * Strings are decoded to bytes; a \udc80-\udcff escape (a lone low surrogate, the PEP 383
 * "surrogateescape" convention qnbench's writer uses for bytes that are not UTF-8) decodes to
 * the raw byte 0x80-0xff, so a file name that is not UTF-8 round-trips exactly.
 *
 * Header-only, used only by the fuzz targets in this directory (never by qnbench itself).
 */
#ifndef QNB_JSON_CHECK_H
#define QNB_JSON_CHECK_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

struct jc {
    const unsigned char *p, *end;
    int depth;
    /* the decoded bytes of every string value (not keys), NUL-separated, in document order */
    unsigned char *strings;
    size_t nstrings, cap;
    /* every number as text, NUL-separated, in document order */
    char *numbers;
    size_t nnumbers, ncap;
};

static int jc_value(struct jc *c);

static void jc_ws(struct jc *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static void jc_push(unsigned char **buf, size_t *n, size_t *cap, unsigned char b)
{
    if (*n + 1 >= *cap) {
        *cap = *cap ? 2 * *cap : 256;
        *buf = realloc(*buf, *cap);
        if (!*buf)
            abort();
    }
    (*buf)[(*n)++] = b;
}

static void jc_put_utf8(struct jc *c, unsigned long u, int keep)
{
    unsigned char b[4];
    int n;
    if (u < 0x80) {
        b[0] = (unsigned char)u;
        n = 1;
    } else if (u < 0x800) {
        b[0] = (unsigned char)(0xc0 | (u >> 6));
        b[1] = (unsigned char)(0x80 | (u & 0x3f));
        n = 2;
    } else if (u < 0x10000) {
        b[0] = (unsigned char)(0xe0 | (u >> 12));
        b[1] = (unsigned char)(0x80 | ((u >> 6) & 0x3f));
        b[2] = (unsigned char)(0x80 | (u & 0x3f));
        n = 3;
    } else {
        b[0] = (unsigned char)(0xf0 | (u >> 18));
        b[1] = (unsigned char)(0x80 | ((u >> 12) & 0x3f));
        b[2] = (unsigned char)(0x80 | ((u >> 6) & 0x3f));
        b[3] = (unsigned char)(0x80 | (u & 0x3f));
        n = 4;
    }
    if (keep)
        for (int i = 0; i < n; i++)
            jc_push(&c->strings, &c->nstrings, &c->cap, b[i]);
}

/* length of the valid UTF-8 sequence at p (RFC 3629: no overlongs, no surrogates), 0 if none */
static size_t jc_utf8_len(const unsigned char *p, const unsigned char *end)
{
    unsigned char b = p[0];
    size_t n;
    unsigned long u;
    if (b < 0x80)
        return 1;
    if (b >= 0xc2 && b <= 0xdf) {
        n = 2;
        u = b & 0x1f;
    } else if (b >= 0xe0 && b <= 0xef) {
        n = 3;
        u = b & 0x0f;
    } else if (b >= 0xf0 && b <= 0xf4) {
        n = 4;
        u = b & 0x07;
    } else
        return 0;
    if ((size_t)(end - p) < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        u = (u << 6) | (p[i] & 0x3f);
    }
    if ((n == 3 && u < 0x800) || (n == 4 && (u < 0x10000 || u > 0x10ffff)) ||
        (u >= 0xd800 && u <= 0xdfff))
        return 0;
    return n;
}

static int jc_hex4(struct jc *c, unsigned long *u)
{
    if (c->end - c->p < 4)
        return -1;
    *u = 0;
    for (int i = 0; i < 4; i++) {
        unsigned char h = c->p[i];
        int d = h >= '0' && h <= '9'   ? h - '0'
                : h >= 'a' && h <= 'f' ? h - 'a' + 10
                : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                       : -1;
        if (d < 0)
            return -1;
        *u = (*u << 4) | (unsigned long)d;
    }
    c->p += 4;
    return 0;
}

static int jc_string(struct jc *c, int keep)
{
    if (c->p >= c->end || *c->p != '"')
        return -1;
    c->p++;
    while (c->p < c->end && *c->p != '"') {
        unsigned char b = *c->p;
        if (b < 0x20)
            return -1; /* raw control characters are not allowed */
        if (b == '\\') {
            c->p++;
            if (c->p >= c->end)
                return -1;
            unsigned char e = *c->p++;
            const char *simple = "\"\\/bfnrt";
            const char *decoded = "\"\\/\b\f\n\r\t";
            const char *s = e ? strchr(simple, e) : NULL;
            if (s) {
                if (keep)
                    jc_push(&c->strings, &c->nstrings, &c->cap,
                            (unsigned char)decoded[s - simple]);
                continue;
            }
            if (e != 'u')
                return -1;
            unsigned long u;
            if (jc_hex4(c, &u))
                return -1;
            if (u >= 0xd800 && u <= 0xdbff) { /* a high surrogate needs its low half */
                unsigned long lo;
                if (c->end - c->p < 6 || c->p[0] != '\\' || c->p[1] != 'u')
                    return -1;
                c->p += 2;
                if (jc_hex4(c, &lo) || lo < 0xdc00 || lo > 0xdfff)
                    return -1;
                jc_put_utf8(c, 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00), keep);
            } else if (u >= 0xdc80 && u <= 0xdcff) { /* surrogateescape: one raw byte */
                if (keep)
                    jc_push(&c->strings, &c->nstrings, &c->cap, (unsigned char)(u - 0xdc00));
            } else if (u >= 0xdc00 && u <= 0xdfff) {
                return -1;
            } else {
                jc_put_utf8(c, u, keep);
            }
            continue;
        }
        size_t n = jc_utf8_len(c->p, c->end);
        if (n == 0)
            return -1; /* not UTF-8 */
        for (size_t i = 0; i < n; i++)
            if (keep)
                jc_push(&c->strings, &c->nstrings, &c->cap, c->p[i]);
        c->p += n;
    }
    if (c->p >= c->end)
        return -1;
    c->p++;
    if (keep)
        jc_push(&c->strings, &c->nstrings, &c->cap, 0);
    return 0;
}

static int jc_digits(struct jc *c)
{
    const unsigned char *s = c->p;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9')
        c->p++;
    return c->p > s ? 0 : -1;
}

static int jc_number(struct jc *c)
{
    const unsigned char *start = c->p;
    if (c->p < c->end && *c->p == '-')
        c->p++;
    if (c->p < c->end && *c->p == '0')
        c->p++;
    else if (jc_digits(c))
        return -1;
    if (c->p < c->end && *c->p == '.') {
        c->p++;
        if (jc_digits(c))
            return -1;
    }
    if (c->p < c->end && (*c->p == 'e' || *c->p == 'E')) {
        c->p++;
        if (c->p < c->end && (*c->p == '+' || *c->p == '-'))
            c->p++;
        if (jc_digits(c))
            return -1;
    }
    for (const unsigned char *q = start; q < c->p; q++)
        jc_push((unsigned char **)&c->numbers, &c->nnumbers, &c->ncap, *q);
    jc_push((unsigned char **)&c->numbers, &c->nnumbers, &c->ncap, 0);
    return 0;
}

static int jc_word(struct jc *c, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, w, n) != 0)
        return -1;
    c->p += n;
    return 0;
}

static int jc_container(struct jc *c, char open, char close)
{
    if (++c->depth > 200)
        return -1;
    c->p++; /* the opening bracket */
    (void)open;
    jc_ws(c);
    if (c->p < c->end && *c->p == close) {
        c->p++;
        c->depth--;
        return 0;
    }
    for (;;) {
        jc_ws(c);
        if (close == '}') {
            if (jc_string(c, 0))
                return -1;
            jc_ws(c);
            if (c->p >= c->end || *c->p != ':')
                return -1;
            c->p++;
        }
        if (jc_value(c))
            return -1;
        jc_ws(c);
        if (c->p >= c->end)
            return -1;
        if (*c->p == ',') {
            c->p++;
            continue;
        }
        if (*c->p != close)
            return -1;
        c->p++;
        c->depth--;
        return 0;
    }
}

static int jc_value(struct jc *c)
{
    jc_ws(c);
    if (c->p >= c->end)
        return -1;
    switch (*c->p) {
    case '{': return jc_container(c, '{', '}');
    case '[': return jc_container(c, '[', ']');
    case '"': return jc_string(c, 1);
    case 't': return jc_word(c, "true");
    case 'f': return jc_word(c, "false");
    case 'n': return jc_word(c, "null");
    default: return jc_number(c);
    }
}

/* 0 when text[0..len) is exactly one JSON value; the caller frees c->strings, c->numbers */
static int jc_parse(struct jc *c, const char *text, size_t len)
{
    memset(c, 0, sizeof *c);
    c->p = (const unsigned char *)text;
    c->end = c->p + len;
    if (jc_value(c))
        return -1;
    jc_ws(c);
    return c->p == c->end ? 0 : -1;
}

static void jc_free(struct jc *c)
{
    free(c->strings);
    free(c->numbers);
}

#endif
