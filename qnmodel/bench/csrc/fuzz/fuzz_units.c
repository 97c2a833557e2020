/* libFuzzer target: qnbench's unit parsers (units.c) on any bytes.
 *
 * Claim checked: every input either parses to a finite, non-negative value or is refused with a
 * non-empty, NUL-terminated message; nothing crashes, reads out of bounds or overflows
 * (ASan/UBSan in the build). Sizes are whole bytes, so a size that parses is an integer.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../qnbench.h"

static void check_err(int rc, const char *err, size_t cap)
{
    if (rc == 0)
        return;
    if (memchr(err, 0, cap) == NULL || err[0] == 0)
        abort(); /* refused without a message */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = 0; /* the parsers take C strings: everything after an embedded NUL is unseen */

    char err[256];
    long long ll;
    double d;
    memset(err, 0, sizeof err);
    int rc = qnb_parse_size(s, &ll, err, sizeof err);
    check_err(rc, err, sizeof err);
    if (rc == 0 && ll < 0)
        abort();

    memset(err, 0, sizeof err);
    rc = qnb_parse_time(s, &d, err, sizeof err);
    check_err(rc, err, sizeof err);
    if (rc == 0 && !(isfinite(d) && d >= 0))
        abort();

    memset(err, 0, sizeof err);
    rc = qnb_parse_rate(s, &d, err, sizeof err);
    check_err(rc, err, sizeof err);
    if (rc == 0 && !(isfinite(d) && d >= 0))
        abort();

    memset(err, 0, sizeof err);
    rc = qnb_parse_int(s, &ll, err, sizeof err);
    check_err(rc, err, sizeof err);
    free(s);
    return 0;
}
