/* libFuzzer target: qnbench's command-line parser (options.c) and its JSON echo of the options.
 *
 * The input is split at NUL or newline bytes into argv. Claims checked: the parser returns 0, 2
 * (usage error) or 3 (help printed) and never crashes; after a successful parse, the options
 * object qnb_options_json writes is exactly one valid JSON value (strict RFC 8259 reader, UTF-8
 * checked), whatever bytes the string options hold.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>

#include "../qnbench.h"
#include "json_check.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    /* --help / --list-engines print to stdout: keep the fuzzer's own output readable (usage
     * errors still go to stderr, where the fuzzer reports a crash) */
    int fd = open("/dev/null", O_WRONLY);
    if (fd >= 0) {
        dup2(fd, 1);
        close(fd);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *buf = malloc(size + 1);
    char **argv = malloc((size + 3) * sizeof *argv) /* argv[0], up to size + 1 pieces, NULL */;
    if (!buf || !argv) {
        free(buf);
        free(argv);
        return 0;
    }
    memcpy(buf, data, size);
    buf[size] = 0;
    int argc = 0;
    argv[argc++] = "qnbench";
    char *start = buf;
    for (size_t i = 0; i <= size; i++) {
        if (buf[i] == 0 || buf[i] == '\n') {
            buf[i] = 0;
            argv[argc++] = start;
            start = buf + i + 1;
        }
    }
    argv[argc] = NULL;

    static struct qnb_config cfg;
    int rc = qnb_parse_args(&cfg, argc, argv);
    if (rc != 0 && rc != 2 && rc != 3)
        abort();
    if (rc == 0) {
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        if (!f)
            abort();
        struct qnb_json j;
        qj_init(&j, f);
        qnb_options_json(&cfg, &j);
        fclose(f);
        struct jc c;
        if (jc_parse(&c, text, len) != 0)
            abort(); /* the echo of the options is not valid JSON */
        jc_free(&c);
        free(text);
    }
    free(buf);
    free(argv);
    return 0;
}
