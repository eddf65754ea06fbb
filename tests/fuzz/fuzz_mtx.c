/* fuzz_mtx.c - libFuzzer target: any bytes handed to the Matrix Market reader give
 * either a valid canonical matrix that survives CSR -> CMRS -> CSR and write -> read
 * exactly, or a documented error with a message; reading them from memory and from a
 * file, and with the serial and the parallel reader, must agree. Bytes that start with the gzip
 * magic take the inflate path here too; fuzz_mtx_gz explores that path properly. */
#include "fuzz_check.h"

#define NAME "<fuzz>"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cmrscl_csr csr;
    cmrscl_status st = cmrs_mtx_read_memory(data, size, NAME, &csr);
    fuzz_check_read(st, &csr, NAME, size);
    fuzz_check_same_in_parallel(data, size, st, &csr, NAME);
    /* The file reader costs a millisecond under ASan (megabyte buffers), twenty times
     * the rest: all inputs that may be gzip, one in eight of the others. */
    if ((size > 0 && data[0] == 0x1f) || size % 8 == 0)
        fuzz_check_same_as_file(data, size, st, &csr, NAME);
    cmrscl_csr_free(&csr);
    return 0;
}
