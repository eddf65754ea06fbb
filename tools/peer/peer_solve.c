/* peer_solve.c - cmrscl-peer --solve cg|pcg|bicgstab: the solvers a user writes with cuSPARSE
 * and cuBLAS, as NVIDIA's conjugateGradientCudaGraphs sample does: the product by cuSPARSE (CSR,
 * and sliced ELL built from the same CSR), dot products and vector updates by cuBLAS in device
 * pointer mode (pcg: the Jacobi preconditioner as cublasDdgmm by the inverse diagonal), the
 * scalars (alpha, beta, omega) by one-thread kernels (compiled by NVRTC), so
 * that nothing comes back to the host within an iteration; each iteration launched on a
 * stream, or captured once in a CUDA graph and replayed. Two figures, as `cmrscl-run solve`
 * gives them:
 *   - the time per iteration: --iterations N iterations after a few untimed ones, between
 *     two CUDA events, no convergence test (the peer at its fastest);
 *   - the time to solution to ||r|| <= --tol ||b|| from x0 = 0, b = 1, the residual read back
 *     after every iteration as the sample does, and the true residual of that x on the CPU.
 * Rows of the CSV: peer,matrix,precision,method,format,mode,rows,nnz,iteration_ms,
 * solve_ms,solve_iterations,true_residual,b_norm. */
#include "peer.h"

#include <cublas_v2.h>
#include <cuda.h>
#include <math.h>
#include <nvrtc.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CUBLAS(call)                                                                               \
    do {                                                                                           \
        cublasStatus_t s_ = (call);                                                                \
        if (s_ != CUBLAS_STATUS_SUCCESS)                                                           \
            return peer_failed(#call, "cuBLAS failed");                                            \
    } while (0)
#define CU(call)                                                                                   \
    do {                                                                                           \
        CUresult r_ = (call);                                                                      \
        if (r_ != CUDA_SUCCESS)                                                                    \
            return peer_failed(#call, "CUDA driver call failed");                                  \
    } while (0)

/* The scalars' one-thread kernels: s is the solver's array of scalars on the device. */
static const char *scalar_source =
    "extern \"C\" __global__ void cg_alpha(real_t *s) { s[3] = s[0] / s[2]; s[4] = -s[3]; }\n"
    "extern \"C\" __global__ void cg_beta(real_t *s) { s[5] = s[0] / s[1]; }\n"
    "extern \"C\" __global__ void cg_keep(real_t *s) { s[1] = s[0]; }\n"
    "extern \"C\" __global__ void bicg_alpha(real_t *s) { s[3] = s[0] / s[2]; s[4] = -s[3]; }\n"
    "extern \"C\" __global__ void bicg_omega(real_t *s) { s[7] = s[5] / s[6]; s[8] = -s[7]; }\n"
    "extern \"C\" __global__ void bicg_beta(real_t *s)\n"
    "{ s[9] = (s[1] / s[0]) * (s[3] / s[7]); s[0] = s[1]; }\n";
/* The scalars: CG r.r, r.r before, p.q, alpha, -alpha, beta; BiCGStab rho, rho', r0*.v,
 * alpha, -alpha, t.s, t.t, omega, -omega, beta, r.r; then 1 (ONE) for axpy. */
enum { SCALARS = 16, ONE = 12, CG_RR = 0, BICG_RR = 10 };

typedef struct solver {
    cusparseHandle_t sp;
    cublasHandle_t bl;
    cudaStream_t stream;
    CUfunction k[6];
    cusparseSpMatDescr_t mat;
    cusparseDnVecDescr_t vin[2], vout[2]; /* p -> q (CG; BiCGStab p -> v), s -> t */
    void *buffer;
    cudaDataType type;
    bool bicg, jacobi;
    int n;
    size_t vs;
    void *x, *r, *p, *q, *rs, *s, *t, *scalars, *dinv; /* pcg: z in rs */
} solver;

static int compile_scalars(solver *sv)
{
    nvrtcProgram prog;
    if (nvrtcCreateProgram(&prog, scalar_source, "scalars.cu", 0, NULL, NULL) != NVRTC_SUCCESS)
        return peer_failed("nvrtcCreateProgram", "failed");
    /* not T: NVRTC's own headers name template parameters so */
    const char *opts[] = {sv->vs == 4 ? "-Dreal_t=float" : "-Dreal_t=double"};
    nvrtcResult r = nvrtcCompileProgram(prog, 1, opts);
    size_t size = 0;
    char *ptx = NULL;
    if (r == NVRTC_SUCCESS && nvrtcGetPTXSize(prog, &size) == NVRTC_SUCCESS && (ptx = malloc(size)))
        r = nvrtcGetPTX(prog, ptx);
    if (r != NVRTC_SUCCESS) { /* the compiler's log, as the library gives a kernel's */
        size_t n = 0;
        char *log = nvrtcGetProgramLogSize(prog, &n) == NVRTC_SUCCESS ? malloc(n + 1) : NULL;
        if (log && nvrtcGetProgramLog(prog, log) == NVRTC_SUCCESS)
            fprintf(stderr, "%s\n", log);
        free(log);
    }
    nvrtcDestroyProgram(&prog);
    if (r != NVRTC_SUCCESS || !ptx) {
        free(ptx);
        return peer_failed("nvrtcCompileProgram", nvrtcGetErrorString(r));
    }
    CUmodule mod;
    CU(cuModuleLoadData(&mod, ptx));
    free(ptx);
    static const char *const names[] = {"cg_alpha",   "cg_beta",    "cg_keep",
                                        "bicg_alpha", "bicg_omega", "bicg_beta"};
    for (int i = 0; i < 6; ++i)
        CU(cuModuleGetFunction(&sv->k[i], mod, names[i]));
    return 0;
}

static int scalar_kernel(solver *sv, int which)
{
    void *args[] = {&sv->scalars};
    CU(cuLaunchKernel(sv->k[which], 1, 1, 1, 1, 1, 1, 0, (CUstream)sv->stream, args, NULL));
    return 0;
}

#define S(i) ((char *)sv->scalars + (i)*sv->vs)

static int dot(solver *sv, const void *a, const void *b, int into)
{
    if (sv->vs == 4)
        CUBLAS(cublasSdot(sv->bl, sv->n, a, 1, b, 1, (float *)S(into)));
    else
        CUBLAS(cublasDdot(sv->bl, sv->n, a, 1, b, 1, (double *)S(into)));
    return 0;
}

static int axpy(solver *sv, int alpha, const void *x, void *y)
{
    if (sv->vs == 4)
        CUBLAS(cublasSaxpy(sv->bl, sv->n, (float *)S(alpha), x, 1, y, 1));
    else
        CUBLAS(cublasDaxpy(sv->bl, sv->n, (double *)S(alpha), x, 1, y, 1));
    return 0;
}

static int scal(solver *sv, int alpha, void *x)
{
    if (sv->vs == 4)
        CUBLAS(cublasSscal(sv->bl, sv->n, (float *)S(alpha), x, 1));
    else
        CUBLAS(cublasDscal(sv->bl, sv->n, (double *)S(alpha), x, 1));
    return 0;
}

/* z = D r: the diagonal D times a vector, as cuBLAS offers it (a one-column dgmm). */
static int diag_times(solver *sv, const void *r, void *z)
{
    if (sv->vs == 4)
        CUBLAS(cublasSdgmm(sv->bl, CUBLAS_SIDE_LEFT, sv->n, 1, r, sv->n, sv->dinv, 1, z, sv->n));
    else
        CUBLAS(cublasDdgmm(sv->bl, CUBLAS_SIDE_LEFT, sv->n, 1, r, sv->n, sv->dinv, 1, z, sv->n));
    return 0;
}

static int copy(solver *sv, const void *from, void *to)
{
    CUDA(cudaMemcpyAsync(to, from, sv->vs * (size_t)sv->n, cudaMemcpyDeviceToDevice, sv->stream));
    return 0;
}

static int product(solver *sv, int which)
{
    double one = 1, zero = 0;
    float onef = 1, zerof = 0;
    const void *a = sv->vs == 4 ? (const void *)&onef : (const void *)&one;
    const void *b = sv->vs == 4 ? (const void *)&zerof : (const void *)&zero;
    CUSPARSE(cusparseSpMV(sv->sp, CUSPARSE_OPERATION_NON_TRANSPOSE, a, sv->mat, sv->vin[which], b,
                          sv->vout[which], sv->type, CUSPARSE_SPMV_ALG_DEFAULT, sv->buffer));
    return 0;
}

/* One iteration, enqueued (or captured): the sample's CG (the textbook's PCG: z = D r in rs,
 * rz in 0, r.r in 10); van der Vorst's BiCGStab. */
static int iteration(solver *sv)
{
    if (sv->jacobi)
        return product(sv, 0) || dot(sv, sv->p, sv->q, 2) || scalar_kernel(sv, 0) ||
               axpy(sv, 3, sv->p, sv->x) || axpy(sv, 4, sv->q, sv->r) ||
               diag_times(sv, sv->r, sv->rs) || scalar_kernel(sv, 2) || dot(sv, sv->r, sv->rs, 0) ||
               scalar_kernel(sv, 1) || scal(sv, 5, sv->p) || axpy(sv, ONE, sv->rs, sv->p) ||
               dot(sv, sv->r, sv->r, BICG_RR);
    if (!sv->bicg)
        return product(sv, 0) || dot(sv, sv->p, sv->q, 2) || scalar_kernel(sv, 0) ||
               axpy(sv, 3, sv->p, sv->x) || axpy(sv, 4, sv->q, sv->r) || scalar_kernel(sv, 2) ||
               dot(sv, sv->r, sv->r, 0) || scalar_kernel(sv, 1) || scal(sv, 5, sv->p) ||
               axpy(sv, ONE, sv->r, sv->p);
    return product(sv, 0) || dot(sv, sv->rs, sv->q, 2) || scalar_kernel(sv, 3) ||
           copy(sv, sv->r, sv->s) || axpy(sv, 4, sv->q, sv->s) || product(sv, 1) ||
           dot(sv, sv->t, sv->s, 5) || dot(sv, sv->t, sv->t, 6) || scalar_kernel(sv, 4) ||
           axpy(sv, 3, sv->p, sv->x) || axpy(sv, 7, sv->s, sv->x) || copy(sv, sv->s, sv->r) ||
           axpy(sv, 8, sv->t, sv->r) || dot(sv, sv->rs, sv->r, 1) || scalar_kernel(sv, 5) ||
           axpy(sv, 8, sv->q, sv->p) || scal(sv, 9, sv->p) || axpy(sv, ONE, sv->r, sv->p) ||
           dot(sv, sv->r, sv->r, BICG_RR);
}

/* x = 0, r = p (= r0*) = b = 1, rho = r.r; pcg: p = z = D r, r.z. */
static int start(solver *sv)
{
    double *h = malloc(sizeof(double) * ((size_t)sv->n + SCALARS));
    if (!h)
        return peer_failed("solve", "out of host memory");
    void *ones = NULL;
    for (int i = 0; i < sv->n; ++i)
        h[i] = 1;
    int rc = peer_upload_values(&ones, h, (size_t)sv->n, sv->vs);
    for (int i = 0; i < SCALARS; ++i)
        h[i] = i == ONE ? 1 : 0;
    void *sc = NULL;
    if (!rc)
        rc = peer_upload_values(&sc, h, SCALARS, sv->vs);
    free(h);
    if (!rc) {
        CUDA(cudaMemcpy(sv->scalars, sc, sv->vs * SCALARS, cudaMemcpyDeviceToDevice));
        CUDA(cudaMemset(sv->x, 0, sv->vs * (size_t)sv->n));
        void *dst[] = {sv->r, sv->p, sv->rs};
        for (int i = 0; i < (sv->bicg ? 3 : 2); ++i)
            CUDA(cudaMemcpy(dst[i], ones, sv->vs * (size_t)sv->n, cudaMemcpyDeviceToDevice));
        rc = dot(sv, sv->r, sv->r, 0);
        if (!rc && sv->jacobi)
            rc = diag_times(sv, sv->r, sv->p) || dot(sv, sv->r, sv->p, 0);
    }
    cudaFree(ones), cudaFree(sc);
    CUDA(cudaStreamSynchronize(sv->stream));
    return rc;
}

/* The time per iteration of `iterations` iterations (after 3 untimed), on the stream or as
 * the replays of a graph of one iteration. */
static int time_iterations(solver *sv, bool graph, int iterations, double *ms)
{
    cudaGraphExec_t exec = NULL;
    if (graph) {
        cudaGraph_t g;
        CUDA(cudaStreamBeginCapture(sv->stream, cudaStreamCaptureModeGlobal));
        int rc = iteration(sv);
        CUDA(cudaStreamEndCapture(sv->stream, &g));
        if (rc)
            return rc;
        CUDA(cudaGraphInstantiate(&exec, g, 0));
        cudaGraphDestroy(g);
    }
    if (start(sv))
        return 1;
    cudaEvent_t e0, e1;
    CUDA(cudaEventCreate(&e0));
    CUDA(cudaEventCreate(&e1));
    for (int i = 0; i < iterations + 3; ++i) {
        if (i == 3)
            CUDA(cudaEventRecord(e0, sv->stream));
        if (graph)
            CUDA(cudaGraphLaunch(exec, sv->stream));
        else if (iteration(sv))
            return 1;
    }
    CUDA(cudaEventRecord(e1, sv->stream));
    CUDA(cudaEventSynchronize(e1));
    float t = 0;
    CUDA(cudaEventElapsedTime(&t, e0, e1));
    *ms = t / iterations;
    cudaEventDestroy(e0), cudaEventDestroy(e1);
    if (exec)
        cudaGraphExecDestroy(exec);
    return 0;
}

/* The time to solution as the sample runs it: a graph of one iteration and the copy of r.r to
 * the host, synchronised after each; then x's true residual on the CPU. */
static int time_solution(solver *sv, const cmrscl_csr *a, double tol, double *ms, int *its,
                         double *true_residual, double *b_norm)
{
    double *rr_host;
    CUDA(cudaMallocHost((void **)&rr_host, sizeof(double)));
    cudaGraph_t g;
    cudaGraphExec_t exec;
    int rr = sv->bicg || sv->jacobi ? BICG_RR : CG_RR;
    CUDA(cudaStreamBeginCapture(sv->stream, cudaStreamCaptureModeGlobal));
    int rc = iteration(sv);
    cudaError_t e = cudaMemcpyAsync(rr_host, S(rr), sv->vs, cudaMemcpyDeviceToHost, sv->stream);
    CUDA(cudaStreamEndCapture(sv->stream, &g));
    if (rc || e != cudaSuccess)
        return rc ? rc : peer_failed("capture", cudaGetErrorString(e));
    CUDA(cudaGraphInstantiate(&exec, g, 0));
    if (start(sv))
        return 1;
    *b_norm = sqrt((double)sv->n);
    double threshold = tol * *b_norm, t0 = peer_seconds(), value = (double)sv->n;
    int k = 0,
        max = 10 * sv->n < 20000 ? 10 * sv->n : 20000; /* a bound on a solve that will not end */
    while (sqrt(value) > threshold && k < max) {
        CUDA(cudaGraphLaunch(exec, sv->stream));
        CUDA(cudaStreamSynchronize(sv->stream));
        value = sv->vs == 4 ? (double)*(float *)rr_host : *rr_host;
        ++k;
        if (!(value >= 0))
            break; /* NaN: broke down */
    }
    *ms = (peer_seconds() - t0) * 1e3;
    *its = k;
    void *xraw = malloc(sv->vs * (size_t)sv->n);
    double *x = malloc(sizeof(double) * (size_t)sv->n),
           *ax = malloc(sizeof(double) * (size_t)sv->n);
    if (!xraw || !x || !ax) {
        free(xraw), free(x), free(ax);
        return peer_failed("solve", "out of host memory");
    }
    CUDA(cudaMemcpy(xraw, sv->x, sv->vs * (size_t)sv->n, cudaMemcpyDeviceToHost));
    for (int i = 0; i < sv->n; ++i)
        x[i] = sv->vs == 4 ? ((float *)xraw)[i] : ((double *)xraw)[i];
    cmrscl_csr_spmv(a, 1.0, x, 0.0, ax);
    double s = 0;
    for (int i = 0; i < sv->n; ++i)
        s += (1 - ax[i]) * (1 - ax[i]);
    *true_residual = sqrt(s);
    free(xraw), free(x), free(ax);
    cudaGraphExecDestroy(exec), cudaGraphDestroy(g), cudaFreeHost(rr_host);
    return 0;
}

/* One format: the product's descriptors and buffer, then both modes timed. */
static int run_format(solver *sv, const char *name, const cmrscl_csr *a, const char *format,
                      const options *o, FILE *csv)
{
    void *vecs[2][2] = {{sv->p, sv->q}, {sv->s, sv->t}};
    for (int i = 0; i < 2; ++i) {
        CUSPARSE(cusparseCreateDnVec(&sv->vin[i], sv->n, vecs[i][0], sv->type));
        CUSPARSE(cusparseCreateDnVec(&sv->vout[i], sv->n, vecs[i][1], sv->type));
    }
    double one = 1, zero = 0;
    float onef = 1, zerof = 0;
    size_t need = 0;
    CUSPARSE(cusparseSpMV_bufferSize(sv->sp, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                     sv->vs == 4 ? (void *)&onef : (void *)&one, sv->mat,
                                     sv->vin[0], sv->vs == 4 ? (void *)&zerof : (void *)&zero,
                                     sv->vout[0], sv->type, CUSPARSE_SPMV_ALG_DEFAULT, &need));
    CUDA(cudaMalloc(&sv->buffer, need ? need : 1));
    int rc = 0;
    double solve_ms = 0, truth = 0, b_norm = 0;
    int its = 0;
    rc = time_solution(sv, a, o->tol, &solve_ms, &its, &truth, &b_norm);
    for (int graph = 0; graph <= 1 && !rc; ++graph) {
        double ms = 0;
        rc = time_iterations(sv, graph, o->iterations, &ms);
        const char *mode = graph ? "graph" : "stream";
        fprintf(stderr,
                "%-28s %-6s %-8s %-4s %-6s %.4f ms/iteration; to %.0e: %d iterations, %.3f ms, "
                "||b - A x|| %.3e (||b|| %.3e)\n",
                name, sv->vs == 4 ? "float" : "double", o->solve, format, mode, ms, o->tol, its,
                solve_ms, truth, b_norm);
        fprintf(csv, "cuSPARSE %d.%d + cuBLAS,%s,%s,%s,%s,%s,%d,%lld,%.6g,%.6g,%d,%.6g,%.6g\n",
                CUSPARSE_VER_MAJOR, CUSPARSE_VER_MINOR, name, sv->vs == 4 ? "float" : "double",
                o->solve, format, mode, sv->n, (long long)a->nnz, ms, solve_ms, its, truth, b_norm);
        fflush(csv);
    }
    for (int i = 0; i < 2; ++i)
        cusparseDestroyDnVec(sv->vin[i]), cusparseDestroyDnVec(sv->vout[i]);
    cudaFree(sv->buffer), sv->buffer = NULL;
    return rc;
}

int peer_run_solve(cusparseHandle_t h, const char *name, const cmrscl_csr *a, int is_float,
                   const options *o, FILE *csv)
{
    if (a->rows != a->cols)
        return peer_failed(name, "a solve needs a square matrix");
    solver sv = {0};
    sv.sp = h, sv.bicg = !strcmp(o->solve, "bicgstab"), sv.jacobi = !strcmp(o->solve, "pcg");
    sv.n = a->rows;
    sv.vs = is_float ? 4 : 8, sv.type = is_float ? CUDA_R_32F : CUDA_R_64F;
    CUDA(cudaStreamCreate(&sv.stream));
    CUSPARSE(cusparseSetStream(h, sv.stream));
    CUBLAS(cublasCreate(&sv.bl));
    CUBLAS(cublasSetStream(sv.bl, sv.stream));
    CUBLAS(cublasSetPointerMode(sv.bl, CUBLAS_POINTER_MODE_DEVICE));
    if (compile_scalars(&sv))
        return 1;
    void **vecs[] = {&sv.x, &sv.r, &sv.p, &sv.q, &sv.rs, &sv.s, &sv.t};
    for (size_t i = 0; i < sizeof vecs / sizeof vecs[0]; ++i)
        CUDA(cudaMalloc(vecs[i], sv.vs * (size_t)(a->rows ? a->rows : 1)));
    CUDA(cudaMalloc(&sv.scalars, sv.vs * SCALARS));
    if (sv.jacobi) { /* the inverse diagonal, from the CSR on the host */
        double *d = malloc(sizeof(double) * ((size_t)a->rows + 1));
        if (!d)
            return peer_failed(name, "out of host memory");
        for (int32_t i = 0; i < a->rows; ++i) {
            d[i] = 1;
            for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k)
                if (a->col_ind[k] == i && a->values[k] != 0)
                    d[i] = 1 / a->values[k];
        }
        int bad = peer_upload_values(&sv.dinv, d, (size_t)a->rows, sv.vs);
        free(d);
        if (bad)
            return 1;
    }
    device_csr d;
    int rc = peer_upload_csr(name, a, sv.vs, &d);
    if (!rc && cusparseCreateCsr(&sv.mat, a->rows, a->cols, a->nnz, d.row_ptr, d.col_ind, d.values,
                                 CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                                 sv.type) != CUSPARSE_STATUS_SUCCESS)
        rc = peer_failed(name, "cusparseCreateCsr failed");
    if (!rc)
        rc = run_format(&sv, name, a, "CSR", o, csv);
    if (sv.mat)
        cusparseDestroySpMat(sv.mat), sv.mat = NULL;
    peer_device_free(&d);
    host_sell s;
    char why[96];
    int built = rc ? -1 : sell_build(a, &s, why, sizeof why);
    if (built == 0) {
        int32_t *offsets = NULL, *cols = NULL;
        void *values = NULL;
        int64_t slices = ((int64_t)a->rows + SELL_SLICE - 1) / SELL_SLICE;
        CUDA(cudaMalloc((void **)&offsets, sizeof(int32_t) * (size_t)(slices + 1)));
        CUDA(cudaMalloc((void **)&cols, sizeof(int32_t) * (size_t)(s.size ? s.size : 1)));
        CUDA(cudaMemcpy(offsets, s.offsets, sizeof(int32_t) * (size_t)(slices + 1),
                        cudaMemcpyHostToDevice));
        CUDA(cudaMemcpy(cols, s.cols, sizeof(int32_t) * (size_t)s.size, cudaMemcpyHostToDevice));
        rc = peer_upload_values(&values, s.values, (size_t)s.size, sv.vs);
        if (!rc &&
            cusparseCreateSlicedEll(&sv.mat, a->rows, a->cols, a->nnz, s.size, SELL_SLICE, offsets,
                                    cols, values, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                    CUSPARSE_INDEX_BASE_ZERO, sv.type) != CUSPARSE_STATUS_SUCCESS)
            rc = peer_failed(name, "cusparseCreateSlicedEll failed");
        if (!rc)
            rc = run_format(&sv, name, a, "SELL", o, csv);
        if (sv.mat)
            cusparseDestroySpMat(sv.mat);
        cudaFree(offsets), cudaFree(cols), cudaFree(values);
        sell_free(&s);
    } else if (built > 0) {
        fprintf(stderr, "%-28s SELL skipped: %s\n", name, why);
    }
    for (size_t i = 0; i < sizeof vecs / sizeof vecs[0]; ++i)
        cudaFree(*vecs[i]);
    cudaFree(sv.scalars), cudaFree(sv.dinv);
    cublasDestroy(sv.bl);
    cusparseSetStream(h, 0);
    cudaStreamDestroy(sv.stream);
    return rc;
}
