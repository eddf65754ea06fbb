/* matrix_update.c - values-only updates of any matrix (cmrscl_matrix_update_values[_cl]):
 * new values in the original CSR order, gathered into place on the device through a
 * permutation, by the kernels of cl/convert.cl. */
#include "convert_launch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- values-only updates ----
 * CMRS position k holds CSR entry perm[k]: k itself in row-ordered strips (and in
 * column-ordered strips of one row with sorted columns), a permutation within each strip
 * otherwise. The permutation (an entry index per entry: 4 bytes, as much as the column
 * indices, or 8 on a 64-bit matrix) is built
 * on the first update, not at creation: most matrices are never updated, and those that
 * are pay for it once, on the device, from the CMRS arrays (convert_permutation). That
 * needs rows whose CSR order the column sort kept (sorted columns: always on the device
 * path, and checked by the host path, which uploads the permutation at creation for rows
 * that were not sorted). From the host the values cross the bus once, raw, into a staging
 * buffer released after the gather: keeping one would cost a second copy of the values
 * for the matrix's lifetime.
 *
 * Layouts with holes (MODULO, slice: host/format/cmrs_holes.c) have their permutation
 * built with the layout and uploaded at creation, a hole's entry is all bits set (the gather
 * writes 0 there and reads no value), and a run of whole strips covers more positions than
 * CSR entries, so chunks keep both starts (values_update.cut, .csr). */

/* What a matrix keeps for its values updates (m->update), under m->lock. */
struct values_update {
    matrix_part_release release; /* first: cmrscl_matrix_free calls it */
    bool perm_pending;           /* BUF_PERM is still to be built from the CMRS arrays */
    uint64_t *strip_csr; /* holes: the CSR entry where each strip starts (strips + 1); or NULL */
    cl_kernel gather[2]; /* by the precision of the values read (float, double), made on first
                            use */
    /* Updates from the host: chunk c is positions cut[c]..cut[c+1]-1 (whole strips), staged
     * through two slots of `slot` values in BUF_STAGING; with holes csr[c] is the CSR entry
     * where it starts (NULL otherwise). */
    size_t *cut, chunks, slot;
    size_t *csr;
};

static void update_release(cmrscl_matrix m)
{
    struct values_update *u = m->update;
    for (int i = 0; i < 2; ++i)
        if (u->gather[i])
            clReleaseKernel(u->gather[i]);
    free(u->strip_csr);
    free(u->cut);
    free(u->csr);
    free(u);
    m->update = NULL;
}

static struct values_update *update_state(cmrscl_matrix m)
{
    if (!m->update && (m->update = calloc(1, sizeof *m->update)))
        m->update->release = update_release;
    return m->update;
}

/* A values update drops A^T through the transposed part's record (exec.h says why not a call
 * into transpose.c); the part's pointer is read under m->lock, as transpose.c sets it there,
 * and once made it stays until the matrix is freed. */
static void transpose_outdated(cmrscl_matrix m)
{
    pthread_mutex_lock(&m->lock);
    const transposed_head *t = (const transposed_head *)m->transposed;
    pthread_mutex_unlock(&m->lock);
    if (t) /* never built otherwise */
        t->outdated(m);
}

cmrscl_status cmrs_update_prepare(cmrscl_matrix m, bool perm_pending, uint64_t *strip_csr)
{
    struct values_update *u = update_state(m);
    if (!u) {
        free(strip_csr);
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for a matrix");
    }
    u->perm_pending = perm_pending;
    free(u->strip_csr);
    u->strip_csr = strip_csr;
    return CMRSCL_OK;
}

cmrscl_status cmrs_update_share(cmrscl_matrix from, cmrscl_matrix to)
{
    const struct values_update *u = from->update;
    if (!u) /* (nothing prepared: no holes, no permutation pending) */
        return CMRSCL_OK;
    uint64_t *strip_csr = NULL;
    size_t bytes = ((size_t)from->params.strips + 1) * sizeof *strip_csr;
    if (u->strip_csr && !(strip_csr = malloc(bytes)))
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for a matrix");
    if (strip_csr)
        memcpy(strip_csr, u->strip_csr, bytes);
    return cmrs_update_prepare(to, u->perm_pending, strip_csr);
}

/* Whether `bytes` more fit beside the matrix: the device's limits and the context's. */
static bool room_beside(cmrscl_matrix m, size_t bytes)
{
    const cmrscl_device_info *d = &m->ctx->info;
    pthread_mutex_lock(&m->ctx->lock);
    uint64_t limit = m->ctx->memory_limit;
    pthread_mutex_unlock(&m->ctx->lock);
    uint64_t total = m->params.device_bytes + bytes;
    return bytes <= d->max_alloc_bytes && total <= d->global_mem_bytes &&
           (!limit || total <= limit);
}

/* How cl/convert.cl's kernels read the column words: 0 a word an entry; narrow columns 1 a
 * slice's steps (4 with jump words), 2 a strip's offsets, whose words keep the row in strip
 * in as few bits as it needs; 3 implied columns, no words. */
static cl_uint narrow_code(const cmrscl_params *p)
{
    return p->column_bits == 0      ? 3
           : p->column_bits != 16   ? 0
           : plan_narrow_offsets(p) ? 2
           : p->column_jumps        ? 4
                                    : 1;
}

/* Builds BUF_PERM when it is pending; the caller holds m->lock. */
static cmrscl_status ensure_permutation(cmrscl_matrix m, const launcher *l)
{
    if (!m->update->perm_pending)
        return CMRSCL_OK;
    cmrscl_params *p = &m->params;
    size_t is = (size_t)p->index_bits / 8, bytes = is * (size_t)p->stored_entries;
    if (!room_beside(m, bytes))
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_DEVICE_MEMORY,
                           "the first values update needs a %zu-byte permutation, which the "
                           "device's limits or the context's memory limit do not leave beside "
                           "the matrix's %llu bytes",
                           bytes, (unsigned long long)p->device_bytes);
    cmrscl_status st = CMRSCL_OK;
    cl_mem perm =
        cmrs_launch_new_buffer(m->ctx, CL_MEM_READ_WRITE, bytes, NULL, &st, "permutation");
    /* slices: where each strip's CSR entries start, for the while the kernel runs */
    cl_mem csr = NULL;
    if (st == CMRSCL_OK && m->update->strip_csr) {
        uint64_t *starts = cmrscl_alloc((size_t)p->strips + 1, sizeof *starts);
        if (!starts)
            st = cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for %d strips", p->strips);
        if (starts) {
            memcpy(starts, m->update->strip_csr, ((size_t)p->strips + 1) * sizeof *starts);
            csr = cmrs_launch_new_buffer(
                m->ctx, CL_MEM_READ_ONLY, is * ((size_t)p->strips + 1),
                cmrs_index_narrow(starts, (size_t)p->strips + 1, p->index_bits), &st,
                "strip starts");
            free(starts);
        }
    }
    cl_uint strips = (cl_uint)p->strips, height = (cl_uint)p->height;
    cl_uint packed = p->layout == CMRSCL_LAYOUT_PACKED, use_csr = csr != NULL;
    cl_uint narrow = narrow_code(p);
    cl_uint row_bits = narrow == 2 ? (cl_uint)plan_narrow_row_bits(p) : (cl_uint)p->row_bits;
    launch_arg args[] = {ARG(strips),
                         ARG(height),
                         ARG(row_bits),
                         ARG(packed),
                         ARG(narrow),
                         ARG(m->buf[BUF_STRIP_PTR]),
                         ARG(m->buf[BUF_COL_IND]),
                         ARG(m->buf[BUF_ROW_IN_STRIP]),
                         ARG(use_csr),
                         ARG(csr),
                         ARG(perm)};
    launcher own = *l;
    if (st == CMRSCL_OK)
        st = cmrs_convert_program(m->ctx, p->precision, p->precision, p->index_bits, &own.program,
                                  NULL);
    if (st == CMRSCL_OK)
        st = cmrs_launch_run(&own, "convert_permutation", args, COUNT(args),
                             (size_t)p->strips * (size_t)p->height, NULL);
    if (csr) /* in order after the kernel: a release waits for the queued reads */
        clReleaseMemObject(csr);
    if (st != CMRSCL_OK) {
        if (perm)
            clReleaseMemObject(perm);
        return st;
    }
    m->buf[BUF_PERM] = perm;
    p->device_bytes += bytes;
    m->update->perm_pending = false;
    return CMRSCL_OK;
}

/* A DICT or FLOAT matrix stores its values plain from its first update on (cmrscl_values in
 * cmrscl.h): updated values are not examined again - a matrix whose values change (a
 * Jacobian, a time step) seldom keeps them few or float-exact. The column words drop their
 * dictionary bits on the device, the values buffer grows to one per entry (filled by the
 * update that follows: it writes every position), and the kernels are rebuilt for PLAIN.
 * The caller holds m->lock. */
static cmrscl_status ensure_plain_values(cmrscl_matrix m, const launcher *l)
{
    cmrscl_params *p = &m->params;
    if (p->values == CMRSCL_VALUES_PLAIN)
        return CMRSCL_OK;
    cmrscl_params plain = *p;
    plain.values = CMRSCL_VALUES_PLAIN, plain.dict_bits = plain.dict_size = 0;
    cmrscl_status st = cmrs_plan_build_options(&m->ctx->info, &plain); /* before anything changes */
    if (st != CMRSCL_OK)
        return st;
    size_t n = (size_t)p->stored_entries, old = cmrs_matrix_values_bytes(p, n),
           bytes = cmrs_matrix_values_bytes(&plain, n);
    size_t col_bytes = p->dict_bits > 0 ? cmrs_matrix_column_bytes(p, n) : 0;
    if (!room_beside(m, bytes + col_bytes)) /* the new column words beside the old, a while */
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_DEVICE_MEMORY,
                           "updated values are stored plain: %zu bytes, which the device's "
                           "limits or the context's memory limit do not leave beside the "
                           "matrix's %llu bytes",
                           bytes + col_bytes, (unsigned long long)p->device_bytes);
    cl_mem values = cmrs_launch_new_buffer(m->ctx, CL_MEM_READ_WRITE, bytes, NULL, &st, "values");
    cl_mem cols =
        col_bytes && st == CMRSCL_OK
            ? cmrs_launch_new_buffer(m->ctx, CL_MEM_READ_WRITE, col_bytes, NULL, &st, "col_ind")
            : NULL;
    if (cols) {
        /* the column words, and the padding the vector loads read (zeros); narrow: the
         * strips' first columns, then the 16-bit words */
        bool narrow = p->column_bits == 16;
        size_t header = narrow ? (size_t)p->strips : 0;
        size_t words = narrow ? (col_bytes - 4 * header) / 2 : n + CMRS_ENTRY_PAD;
        launcher own = *l;
        /* the row's bits: none in a slice's steps, as few as needed in a strip's offsets */
        cl_uint n32 = (cl_uint)words, code = narrow_code(p), strips = (cl_uint)header,
                row_bits = (cl_uint)(narrow ? plan_narrow_row_bits(p) : p->row_bits),
                dict_bits = (cl_uint)p->dict_bits;
        cl_ulong n64 = words;
        launch_arg args[] = {p->index_bits == 64 ? ARG(n64) : ARG(n32),
                             ARG(code),
                             ARG(strips),
                             ARG(row_bits),
                             ARG(dict_bits),
                             ARG(m->buf[BUF_COL_IND]),
                             ARG(cols)};
        st = cmrs_convert_program(m->ctx, p->precision, p->precision, p->index_bits, &own.program,
                                  NULL);
        if (st == CMRSCL_OK)
            st = cmrs_launch_run(&own, "convert_drop_dict", args, COUNT(args),
                                 words > header ? words : header, NULL);
    }
    if (st != CMRSCL_OK) {
        if (values)
            clReleaseMemObject(values);
        if (cols)
            clReleaseMemObject(cols);
        return st;
    }
    if (cols) { /* in order after convert_drop_dict: a release waits for the queued reads */
        clReleaseMemObject(m->buf[BUF_COL_IND]);
        m->buf[BUF_COL_IND] = cols;
    }
    clReleaseMemObject(m->buf[BUF_VALUES]);
    m->buf[BUF_VALUES] = values;
    plain.device_bytes = p->device_bytes - old + bytes;
    size_t len = strlen(plain.plan_reason);
    snprintf(plain.plan_reason + len, sizeof plain.plan_reason - len,
             "; stored plain since a values update");
    cmrs_plan_bytes_per_entry(&plain);
    *p = plain;
    return cmrs_matrix_create_kernels(m);
}

/* Enqueues values[first, first + count) = src gathered through the permutation (a plain
 * copy when there is none and the precisions agree); src holds CSR entries csr_first.. at
 * src_offset (csr_first == first but for the holes of MODULO and slice). The range is a run of
 * whole strips (the permutation stays within strips). The caller holds m->lock. */
static cmrscl_status gather(cmrscl_matrix m, const launcher *l, cl_mem src, size_t src_offset,
                            cmrscl_precision source, size_t first, size_t csr_first, size_t count)
{
    const cmrscl_params *p = &m->params;
    cl_mem perm = m->buf[BUF_PERM];
    if (!perm && source == p->precision) {
        size_t vs = cmrscl_precision_size(source);
        cl_int err = clEnqueueCopyBuffer(l->queue, src, m->buf[BUF_VALUES], vs * src_offset,
                                         vs * first, vs * count, 0, NULL, NULL);
        if (err == CL_SUCCESS)
            err = cmrs_launch_order_point(l);
        return err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "clEnqueueCopyBuffer");
    }
    cl_kernel *k = &m->update->gather[source == CMRSCL_DOUBLE];
    cmrscl_status st = CMRSCL_OK;
    if (!*k) {
        cl_program prog;
        st = cmrs_convert_program(m->ctx, p->precision, source, p->index_bits, &prog, NULL);
        cl_int err = CL_SUCCESS;
        if (st == CMRSCL_OK && !(*k = clCreateKernel(prog, "convert_values", &err)))
            st = cmrscl_fail_cl(err, "clCreateKernel");
    }
    /* index_t of convert.cl: the matrix's entry index width. The kernel reads CSR entry e at
     * src_offset + e - first: shift the offset by the holes before the range. */
    src_offset += first - csr_first;
    cl_uint range32[3] = {(cl_uint)first, (cl_uint)count, (cl_uint)src_offset};
    cl_ulong range64[3] = {first, count, src_offset};
    bool wide = p->index_bits == 64;
    cl_uint use_perm = perm != NULL;
    launch_arg args[] = {wide ? ARG(range64[0]) : ARG(range32[0]),
                         wide ? ARG(range64[1]) : ARG(range32[1]),
                         ARG(use_perm),
                         ARG(perm),
                         ARG(src),
                         wide ? ARG(range64[2]) : ARG(range32[2]),
                         ARG(m->buf[BUF_VALUES])};
    if (st == CMRSCL_OK)
        st = cmrs_launch_set_args(*k, args, COUNT(args));
    if (st == CMRSCL_OK)
        st = cmrs_launch_enqueue(l, *k, count, 0, NULL, NULL);
    return st;
}

/* What every update does first, under m->lock: ordered after the products enqueued before,
 * its state made, the values plain and the permutation built. */
static cmrscl_status begin_update(cmrscl_matrix m, const launcher *l)
{
    cl_int err = cmrs_launch_order_point(l);
    if (err != CL_SUCCESS)
        return cmrscl_fail_cl(err, "clEnqueueBarrierWithWaitList");
    if (!update_state(m))
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for an update");
    cmrscl_status st = ensure_plain_values(m, l);
    return st == CMRSCL_OK ? ensure_permutation(m, l) : st;
}

static cmrscl_status check_update(cmrscl_matrix m, cmrscl_precision values_precision)
{
    if (!m)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "matrix is NULL");
    if (values_precision != CMRSCL_FLOAT && values_precision != CMRSCL_DOUBLE)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "values precision %d is neither CMRSCL_FLOAT nor CMRSCL_DOUBLE",
                           (int)values_precision);
    return CMRSCL_OK;
}

cmrscl_status cmrscl_matrix_update_values_cl(cmrscl_matrix m, cl_mem values,
                                             cmrscl_precision values_precision)
{
    cmrscl_status st = check_update(m, values_precision);
    if (st != CMRSCL_OK)
        return st;
    if (values_precision == CMRSCL_DOUBLE && !m->ctx->info.fp64)
        return cmrscl_fail(CMRSCL_ERROR_UNSUPPORTED,
                           "double values need cl_khr_fp64, which device \"%s\" lacks",
                           m->ctx->info.device_name);
    st = cmrs_renumber_refuse(m, "a values update from a cl_mem");
    if (st != CMRSCL_OK)
        return st;
    size_t nnz = (size_t)m->params.nnz;
    st = cmrs_buffer_check(m->ctx->context, values, cmrscl_precision_size(values_precision) * nnz,
                           "values");
    if (st != CMRSCL_OK || nnz == 0)
        return st;
    launcher l = cmrs_launcher_make(m->ctx);
    pthread_mutex_lock(&m->lock);
    st = begin_update(m, &l);
    if (st == CMRSCL_OK) /* all positions, holes included */
        st = gather(m, &l, values, 0, values_precision, 0, 0, (size_t)m->params.stored_entries);
    pthread_mutex_unlock(&m->lock);
    transpose_outdated(m);
    ++m->values_version; /* solvers take the Jacobi diagonal again */
    return st;
}

/* ---- updates from host memory: chunks through a staging ring ----
 * The values cross the bus in chunks of whole strips into one of two staging slots, and
 * each chunk is gathered into place as soon as it has landed: the device memory this
 * takes is two chunks, not a second copy of the values, and the time is the bus copy's
 * plus the last chunk's gather (measured against a full-size staging buffer allocated per
 * call: that allocation alone cost NVIDIA 15-25% of the copy). */

size_t cmrs_matrix_update_chunk = (size_t)4 << 20; /* 32 MB of doubles, 16 MB of floats */

/* The chunk boundaries (strip starts) and the staging ring, made on the first update from
 * the host; the caller holds m->lock. Without a permutation any boundary will do. */
static cmrscl_status ensure_update_ring(cmrscl_matrix m, const launcher *l)
{
    if (m->buf[BUF_STAGING])
        return CMRSCL_OK;
    const cmrscl_params *p = &m->params;
    size_t nnz = (size_t)p->stored_entries, strips = (size_t)p->strips, slot = 0, chunks = 0;
    const uint64_t *csr = m->update->strip_csr; /* holes: CSR starts differ from positions */
    uint64_t *strip_ptr = NULL;                 /* entry indices, the long-strip flag dropped */
    cmrscl_status st = CMRSCL_OK;
    if (m->buf[BUF_PERM]) { /* whole strips: read StripPtr once */
        strip_ptr = cmrscl_alloc(strips + 1, sizeof *strip_ptr);
        if (!strip_ptr)
            return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for %zu strips", strips);
        st = cmrs_matrix_read_strip_ptr(m, strip_ptr);
    }
    size_t *cut = cmrscl_alloc(nnz / cmrs_matrix_update_chunk + strips + 2, sizeof *cut);
    size_t *csr_cut =
        csr ? cmrscl_alloc(nnz / cmrs_matrix_update_chunk + strips + 2, sizeof *cut) : NULL;
    if (st == CMRSCL_OK && (!cut || (csr && !csr_cut)))
        st = cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for the update chunks");
    if (st == CMRSCL_OK) {
        if (csr_cut)
            csr_cut[chunks] = 0;
        cut[chunks++] = 0;
        for (size_t s = 1; strip_ptr && s <= strips; ++s) { /* cut before a strip that would
                                                             * overflow a non-empty chunk */
            size_t end = strip_ptr[s], begin = strip_ptr[s - 1];
            if (end - cut[chunks - 1] > cmrs_matrix_update_chunk && begin > cut[chunks - 1]) {
                if (csr_cut)
                    csr_cut[chunks] = csr[s - 1];
                cut[chunks++] = begin;
            }
        }
        for (size_t e = cmrs_matrix_update_chunk; !strip_ptr && e < nnz;
             e += cmrs_matrix_update_chunk)
            cut[chunks++] = e;
        cut[chunks] = nnz;
        if (csr_cut)
            csr_cut[chunks] = (size_t)p->nnz;
        const size_t *values_cut = csr_cut ? csr_cut : cut; /* what staging holds */
        for (size_t c = 0; c < chunks; ++c)
            slot =
                values_cut[c + 1] - values_cut[c] > slot ? values_cut[c + 1] - values_cut[c] : slot;
        size_t bytes = 2 * slot * sizeof(double);
        if (!room_beside(m, bytes))
            st = cmrscl_fail(CMRSCL_ERROR_OUT_OF_DEVICE_MEMORY,
                             "an update from the host needs %zu bytes of staging, which the "
                             "device's limits or the context's memory limit do not leave beside "
                             "the matrix's %llu bytes",
                             bytes, (unsigned long long)m->params.device_bytes);
        else
            m->buf[BUF_STAGING] =
                cmrs_launch_new_buffer(m->ctx, CL_MEM_READ_ONLY, bytes, NULL, &st, "staging");
        if (st == CMRSCL_OK) {
            m->params.device_bytes += bytes;
            m->update->cut = cut, m->update->chunks = chunks, m->update->slot = slot;
            m->update->csr = csr_cut;
            cmrscl_trace("updates from the host: %zu chunks of at most %zu entries", chunks, slot);
            cut = csr_cut = NULL;
        }
    }
    free(cut);
    free(csr_cut);
    free(strip_ptr);
    return st;
}

/* Enqueues the chunks: chunk c is written into slot c % 2 (after the gather that last read
 * it, by queue order) and gathered into place. *last_write: the last write's event. */
static cmrscl_status update_in_chunks(cmrscl_matrix m, const launcher *l, const void *values,
                                      cmrscl_precision source, cl_event *last_write)
{
    size_t vs = cmrscl_precision_size(source);
    cmrscl_status st = CMRSCL_OK;
    const struct values_update *u = m->update;
    for (size_t c = 0; c < u->chunks && st == CMRSCL_OK; ++c) {
        size_t first = u->cut[c], count = u->cut[c + 1] - first;
        const size_t *csr = u->csr ? u->csr : u->cut;
        size_t csr_first = csr[c], csr_count = csr[c + 1] - csr_first;
        size_t offset = (c % 2) * u->slot;
        bool last = c + 1 == u->chunks;
        /* Blocking: NVIDIA copies pageable memory 25-40% slower without waiting. */
        cl_int err = clEnqueueWriteBuffer(l->queue, m->buf[BUF_STAGING], CL_TRUE, vs * offset,
                                          vs * csr_count, (const char *)values + vs * csr_first, 0,
                                          NULL, last ? last_write : NULL);
        if (err == CL_SUCCESS)
            err = cmrs_launch_order_point(l);
        st = err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "clEnqueueWriteBuffer");
        if (st == CMRSCL_OK)
            st = gather(m, l, m->buf[BUF_STAGING], offset, source, first, csr_first, count);
    }
    return st;
}

cmrscl_status cmrscl_matrix_update_values(cmrscl_matrix m, const void *values,
                                          cmrscl_precision values_precision)
{
    cmrscl_status st = check_update(m, values_precision);
    if (st != CMRSCL_OK || m->params.nnz == 0)
        return st;
    if (!values)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "values is NULL");
    const cmrscl_params *p = &m->params;
    size_t nnz = (size_t)p->nnz;
    void *rounded = NULL; /* doubles for a device without fp64 */
    if (values_precision == CMRSCL_DOUBLE && !m->ctx->info.fp64) {
        if (!(rounded = cmrscl_alloc(nnz, sizeof(float))))
            return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for %zu values", nnz);
        cmrs_values_convert(rounded, CMRSCL_FLOAT, values, CMRSCL_DOUBLE, p->nnz);
        values = rounded, values_precision = CMRSCL_FLOAT;
    }
    void *moved = NULL; /* a renumbered matrix's: in the device's entry order */
    if (m->renumbering) {
        size_t vs = cmrscl_precision_size(values_precision);
        if (!(moved = cmrscl_alloc(nnz, vs))) {
            free(rounded);
            return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for %zu values", nnz);
        }
        cmrs_renumber_values(m, values, vs, moved);
        values = moved;
    }
    launcher l = cmrs_launcher_make(m->ctx);
    cl_event written = NULL;
    pthread_mutex_lock(&m->lock);
    st = begin_update(m, &l);
    bool direct = !m->buf[BUF_PERM] && values_precision == p->precision;
    if (st == CMRSCL_OK && direct) {
        cl_int err = clEnqueueWriteBuffer(l.queue, m->buf[BUF_VALUES], CL_FALSE, 0,
                                          cmrscl_precision_size(values_precision) * nnz, values, 0,
                                          NULL, &written);
        if (err == CL_SUCCESS)
            err = cmrs_launch_order_point(&l);
        st = err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "clEnqueueWriteBuffer");
    } else if (st == CMRSCL_OK) {
        st = ensure_update_ring(m, &l);
        if (st == CMRSCL_OK)
            st = update_in_chunks(m, &l, values, values_precision, &written);
    }
    pthread_mutex_unlock(&m->lock);
    transpose_outdated(m);
    ++m->values_version; /* solvers take the Jacobi diagonal again */
    if (written) {       /* the caller may reuse `values` when this returns: every write is done
                          * once the last is (queue order) */
        cmrscl_status waited = cmrs_launch_wait(&written, 1);
        if (st == CMRSCL_OK)
            st = waited;
    }
    free(rounded), free(moved);
    return st;
}
