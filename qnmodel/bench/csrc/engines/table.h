/* THE engine table: one X(NAME) entry per engine, in the order of --help and --list-engines.
 *
 * Adding an engine = adding one file engines/NAME.c that defines
 *     const struct qnb_engine qnb_engine_NAME = { .name = "NAME", ... };
 * (see struct qnb_engine in qnbench.h) and one X(NAME) entry here. Everything else (the --engine
 * choices, --help, --list-engines, the lookup by name, and the Python side via --list-engines)
 * is derived from this table. Options the engine needs go into the option table (options.c).
 */
#ifndef QNB_ENGINE_TABLE_H
#define QNB_ENGINE_TABLE_H

#define QNB_ENGINE_TABLE(X)                                                                        \
    X(null)                                                                                        \
    X(emu)                                                                                         \
    X(file)                                                                                        \
    X(mem)                                                                                         \
    X(cpu)                                                                                         \
    X(tcp)                                                                                         \
    X(stripe)                                                                                      \
    X(nfs)                                                                                         \
    X(meta)                                                                                        \
    X(mpilink)

#endif
