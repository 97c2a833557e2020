"""Model exchange and files: TOML model files (:mod:`qnmodel.io.modelfile`), JMT's JMVA XML
(:mod:`qnmodel.io.jmva`) and LINE's JSON (:mod:`qnmodel.io.linejson`), readers and writers of
the one description."""
