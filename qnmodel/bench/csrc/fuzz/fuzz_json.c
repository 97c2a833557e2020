/* libFuzzer target: qnbench's JSON writer (json.c), round-tripped through a strict reader.
 *
 * The input is read as a key, a string value and a double: the writer must produce exactly one
 * valid JSON document (UTF-8, no NaN/Infinity) from which the reader gets back the same string
 * bytes (bytes that are not UTF-8 come back through the surrogateescape convention) and the same
 * double bit for bit (a non-finite double is written as null).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../qnbench.h"
#include "json_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    double v = 0.0;
    if (size >= sizeof v) {
        memcpy(&v, data, sizeof v);
        data += sizeof v;
        size -= sizeof v;
    }
    /* the rest: "key\0value" (C strings: the writer's inputs never hold NUL) */
    char *s = malloc(size + 2);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = 0;
    s[size + 1] = 0;
    const char *key = s;
    const char *val = s + strlen(s) + 1;
    if (val > s + size)
        val = s + size;

    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        abort();
    struct qnb_json j;
    qj_init(&j, f);
    qj_obj_begin(&j);
    qj_kstr(&j, key, val);
    qj_knum(&j, "v", v);
    qj_key(&j, "list");
    qj_arr_begin(&j);
    qj_str(&j, val);
    qj_num(&j, v);
    qj_arr_end(&j);
    qj_obj_end(&j);
    fclose(f);

    struct jc c;
    if (jc_parse(&c, text, len) != 0)
        abort(); /* the writer produced invalid JSON */
    /* string values in document order: val, val */
    size_t vlen = strlen(val);
    if (c.nstrings != 2 * (vlen + 1) || memcmp(c.strings, val, vlen + 1) != 0 ||
        memcmp(c.strings + vlen + 1, val, vlen + 1) != 0)
        abort(); /* a string did not come back byte for byte */
    /* numbers in document order: v, v */
    const char *n1 = c.numbers;
    if (isfinite(v)) {
        if (!n1 || c.nnumbers == 0)
            abort();
        const char *n2 = n1 + strlen(n1) + 1;
        double r1 = strtod(n1, NULL), r2 = strtod(n2, NULL);
        if (memcmp(&r1, &v, sizeof v) != 0 && !(v == 0 && r1 == 0))
            abort(); /* the number did not read back exactly */
        if (r1 != r2 || (v == 0 && signbit(v) != signbit(r1)))
            abort();
    } else if (c.nnumbers != 0) {
        abort(); /* a non-finite double must be null */
    }
    jc_free(&c);
    free(text);
    free(s);
    return 0;
}
