// jemalloc's compiled-in options (read by jemalloc at its first allocation;
// the MALLOC_CONF environment variable still overrides them, e.g.
// MALLOC_CONF=thp:never for an A/B run on 4 KiB pages).
//
//   thp:always           every heap extent is madvise(MADV_HUGEPAGE)d, so the
//                        kernel backs it with 2 MiB pages even in THP mode
//                        "madvise" (Debian's default): 512x fewer page faults;
//   metadata_thp:always  the same for jemalloc's own metadata.
extern "C" {
// NOLINTNEXTLINE: the name and type are jemalloc's interface.
const char* malloc_conf = "thp:always,metadata_thp:always";
}
