/* solve.h - the solver stage, above the products (include/cmrscl_solve.h): the solver and its
 * workspace (solver.c: the public calls; solve_run.c: a solve's passes, iterations and
 * checks; solve_kernels.c: the vector kernels, the workspace's layout, the Jacobi diagonal),
 * and one strategy object per method (solve_cg.c, solve_bicgstab.c, solve_gmres.c) that
 * enqueues its set-up and its iterations. The kernels: cl/solve.cl, cl/solve_gmres.cl, and
 * each family's product built with the epilogue of cl/dots.cl (exec/spmv_dots.c). */
#ifndef CMRSCL_SOLVE_STAGE_H
#define CMRSCL_SOLVE_STAGE_H

#include "exec/exec.h"

/* The products of a matrix whose product runs more work-groups than this leave more real4s
 * of partial sums than every work-group of the next kernel should add up itself: a
 * reduction kernel (solve_reduce) first cuts them to a few, each of its work-items adding
 * SOLVE_REDUCE_SHARE of them or more. The trade: an extra launch against every work-group
 * reading them all (docs/dev/PERFORMANCE.md, SOLVE_FOLD_LIMIT; the share's grid measured no
 * different from 1 to 4: SOLVE_REDUCE_SHARE). Where the product's family can walk group after
 * group but keeps its full grid (segment, MODULO), a method whose next kernel loads its rows
 * with the sums (solve_method.chain_sums false: CG) caps the grid at the limit instead - two
 * launches an iteration, not three; BiCGStab's kernels, which wait for the sums, lost more
 * adding them than the launch cost (docs/dev/PERFORMANCE.md, SOLVE_FOLD_CAP). */
#define SOLVE_FOLD_LIMIT 8192
#define SOLVE_REDUCE_SHARE 4
/* Where the device lets a product's units add their real4s up themselves (cl/dots.cl,
 * DOTS_CHAIN), they number at most SOLVE_CHAIN_LIMIT and the method's next kernels wait for
 * the sums (solve_method.chain_sums), they do: the next kernel then reads one real4 instead of
 * every work-group adding them all. Each unit pays a device-wide fence and an atomic, which
 * hold it until its stores are visible: on many units that costs a product more than
 * solve_reduce's launch (docs/dev/PERFORMANCE.md, SOLVE_CHAIN_LIMIT). */
#define SOLVE_CHAIN_LIMIT 8192
typedef enum solve_sums {
    SUMS_FOLD,   /* every work-group of the next kernel adds them all */
    SUMS_REDUCE, /* solve_reduce cuts them to a few first */
    SUMS_CHAIN   /* the product's last units add them up: the next kernel reads one */
} solve_sums;
/* The vector kernels' work-groups, the share of the device's resident work-items their grid
 * takes and the fewest rows a work-item takes (solve_kernels.c, choose_grid;
 * docs/dev/PERFORMANCE.md, SOLVE_GROUP and SOLVE_OCCUPANCY, SOLVE_ROWS). */
#define SOLVE_GROUP 512
#define SOLVE_OCCUPANCY 2
#define SOLVE_ROWS 1

/* GMRES's dots (cl/solve_gmres.cl, gmres_dots): basis vectors a work-group. Four on CPUs, where
 * each load of w then serves four dots (PoCL: the Arnoldi step 10-15% faster); one elsewhere,
 * where the work-groups of one vector each are what keeps a GPU's memory busy (an H200: four a
 * group made GMRES(20) 20% slower on 2 M rows) (docs/dev/PERFORMANCE.md, GMRES_DOTS_PER). */
#define GMRES_DOTS_PER(s) (((s)->ctx->info.type & CL_DEVICE_TYPE_CPU) ? 4u : 1u)

/* The workspace's regions, in reals from its start (cmrs_abi.h: the header first). */
typedef struct solve_layout {
    cl_uint product;     /* the products' real4s (product_kernels.space of them: a split
                            plan's combine's first, the first kernel's after), then the
                            chain's region (cl/dots.cl) */
    cl_uint reduced;     /* solve_reduce's real4s (grid) */
    cl_uint rr[2];       /* the update kernels' real4s, alternating (CG: one reads, one writes) */
    cl_uint start;       /* solve_start's sums of b and the inputs' NaN and Inf */
    cl_uint second;      /* another kernel's real4s (BiCGStab's s.s; the norm at the end) */
    cl_uint method;      /* the method's own (GMRES: its Hessenberg and rotations), at least 4 */
    cl_uint history;     /* ||r_k||^2, k = 0.. */
    cl_uint history_cap; /* entries the history holds */
    size_t reals;        /* the whole workspace */
} solve_layout;

typedef struct solve_method solve_method;

/* An iteration's launches in three parts: those before the one that writes x (AHEAD), that one,
 * which also writes the header's iteration and residual (X), and those after it (BEHIND). A
 * monitor reads x between X and the rest, so the device runs BEHIND and the next AHEAD while
 * the host calls it. */
enum { ITER_AHEAD = 1, ITER_X = 2, ITER_BEHIND = 4, ITER_ALL = 7 };

/* What a solver keeps between solves. Vectors, kernels and arguments are set once; a solve
 * binds b and x (the user's buffers) and enqueues. */
struct cmrscl_solver_s {
    cmrscl_matrix m;
    cmrscl_context ctx;
    cmrscl_solve_options opt; /* with the defaults filled in */
    const solve_method *method;
    cmrscl_precision precision;
    size_t value_size;
    cl_uint n;
    /* the vector kernels: cl/solve.cl built for this precision and work-group size, each
     * launch a grid of `groups` work-groups of `local` work-items */
    cl_program program, gmres_program;
    unsigned gmres_blocks; /* gmres_program's GMRES_BLOCKS */
    size_t local, global, groups;
    cl_kernel start, init, reduce, norm, triple;
    product_kernels product[2]; /* the method's products with the epilogue */
    product_kernels fused[3];   /* CG's iterations fused into its product (solve_cg.c) */
    solve_sums sums;            /* how the next kernel finds their real4s */
    size_t product_groups;      /* real4s a product leaves for the next kernel to add up */
    size_t product_space;       /* ... and writes in all (a split plan's: its two kernels') */
    size_t fold_cap;            /* its grid's cap where its family keeps the full grid (solve.h) */
    size_t chain;               /* SUMS_CHAIN: the units of a chunk (cl/dots.cl, DOTS_CHAIN) */
    size_t reduce_groups;       /* SUMS_REDUCE: solve_reduce's work-groups, the real4s it leaves */
    cl_kernel kernel[8];        /* the method's own, by its indices */
    cl_mem ws;
    solve_layout at;
    cl_mem vec[8]; /* the method's work vectors, n values each */
    cl_mem dinv;   /* Jacobi: the inverse diagonal */
    /* a renumbered matrix's (cmrscl_renumber): b and x in its order, and with AMG the cycle's
     * r and z in the caller's */
    cl_mem ordered[4];
    cl_mem *views; /* sub-buffers the method made of its vectors (GMRES's basis) */
    size_t view_count;
    unsigned values_version; /* the matrix's values the diagonal was taken from */
    /* the solve in progress: a pass of it (the first, or a restart from the true residual)
     * begins after `done` iterations and runs at most pass_max more; the methods count their
     * iterations from the pass's start (solver.c) */
    int done, pass_max;
    /* the share of the threshold a pass's recurrence aims at: 1, lower in a restart from the
     * true residual, which must leave room for its rounding (solve_run.c) */
    double target;
    cl_mem b, x;
    cl_command_queue queue;
    bool out_of_order;
    int launches; /* kernels enqueued since the pass's iterations began */
    int iterations_enqueued, launches_enqueued; /* by every pass of the solve */
    double check_seconds;                       /* a check's round trip, measured when made */
    /* where the checks read the header to: two headers in pinned (mapped) host memory, as a
     * read into pageable memory is not asynchronous on every device (NVIDIA's returns only
     * once the queue has run up to it, so the host could not enqueue past a check); the
     * struct's own array where mapping fails */
    cl_mem pinned;
    void *headers;
    double own_headers[2 * CMRS_WS_HEADER];
};

/* A method: how many vectors and products it needs, and the kernels it enqueues. */
struct solve_method {
    cmrscl_method id;
    const char *name;
    int vectors;  /* work vectors (GMRES: plus restart + 1, its own) */
    int products; /* products with the epilogue */
    /* product i's build options ("-DDOTS=2" ...) */
    const char *(*product_options)(const cmrscl_solver s, int i);
    bool jacobi; /* takes the Jacobi preconditioner */
    /* its kernels after a product wait for the product's sums before their own loads (CG's
     * step loads its first rows with them): the chain's one real4 pays (SOLVE_CHAIN_LIMIT) */
    bool chain_sums;
    /* reals of the workspace's method region (NULL: none) */
    cl_uint (*workspace)(const cmrscl_solver s);
    /* the method's kernels, made and their fixed arguments set (after the common ones) */
    cmrscl_status (*prepare)(cmrscl_solver s);
    /* the products' arguments (again when the matrix's kernels were made anew: a values
     * update that stored the values another way) */
    cmrscl_status (*bind_products)(cmrscl_solver s);
    /* a pass's set-up, given b and x: r = b - A x is in vec[0] already (solver.c); the
     * method's start (solve_start, solve_init) and its first product */
    cmrscl_status (*start)(cmrscl_solver s, cl_mem b, cl_mem x);
    /* iteration i (0-based, of the pass) of at most `max` (the pass's), the parts in `parts`
     * (ITER_ALL, or some of it in order: solve_run.c splits an iteration around its write of x
     * for a monitor); i == max - 1 skips what only a next one needs */
    cmrscl_status (*iterate)(cmrscl_solver s, int i, int max, unsigned parts);
    /* after the pass's max iterations: the test of the last iterate (its residual into the
     * history) */
    cmrscl_status (*check_last)(cmrscl_solver s, int max);
    /* after the loop: x complete (GMRES adds its last cycle's combination) */
    cmrscl_status (*finish)(cmrscl_solver s, cl_mem x);
    /* the breakdown of value v at iteration it, in words, into why[size]; cause: which
     * quantity (CMRS_WS_CAUSE, the method's own codes) */
    void (*breakdown)(const cmrscl_solver s, double v, int cause, int it, char *why, size_t size);
};
CMRSCL_HIDDEN extern const solve_method cmrs_solve_cg, cmrs_solve_bicgstab, cmrs_solve_gmres,
    cmrs_solve_pcg, cmrs_solve_pbicgstab, cmrs_solve_pgmres;

/* solve_pcg.c: a solver's preconditioner object (opt.precond), made for its matrix's rows,
 * precision and context, or ERROR_INVALID_ARGUMENT naming the difference; z = M r enqueued on
 * the solver's queue (the context's: ERROR_UNSUPPORTED on another), its launches counted. */
CMRSCL_HIDDEN cmrscl_status cmrs_solve_precond_check(const cmrscl_solver s);
CMRSCL_HIDDEN cmrscl_status cmrs_solve_precondition(cmrscl_solver s, cl_mem r, cl_mem z);

/* ---- solve_run.c ---- */

/* A solve whose arguments solver.c checked: its passes, the true residual, the history and
 * the outcome into *out (all but seconds). */
CMRSCL_HIDDEN cmrscl_status cmrs_solve_run(cmrscl_solver s, cl_mem b, cl_mem x,
                                           cmrscl_solve_result *out);

/* ---- solve_kernels.c ---- */

/* The vector kernels' program, grid and common kernels (solve_start .. solve_norm). */
CMRSCL_HIDDEN cmrscl_status cmrs_solve_kernels_make(cmrscl_solver s);
/* A kernel of cl/solve.cl (or cl/solve_gmres.cl: gmres true). */
CMRSCL_HIDDEN cmrscl_status cmrs_solve_kernel(cmrscl_solver s, bool gmres, const char *name,
                                              cl_kernel *out);
/* The workspace's layout for the method and its device buffer. */
CMRSCL_HIDDEN cmrscl_status cmrs_solve_workspace_make(cmrscl_solver s, cl_uint method_reals);
/* Sets arguments from `at` on: each a pointer to its value and its size. */
typedef struct solve_arg {
    size_t size;
    const void *value;
} solve_arg;
#define SOLVE_MEM(b) ((solve_arg){sizeof(cl_mem), &(b)})
#define SOLVE_UINT(u) ((solve_arg){sizeof(cl_uint), &(u)})
CMRSCL_HIDDEN cmrscl_status cmrs_solve_set_args(cl_kernel k, cl_uint at, int n,
                                                const solve_arg *args);
/* A real scalar argument in the solver's precision. */
CMRSCL_HIDDEN cl_int cmrs_solve_set_real(cmrscl_solver s, cl_kernel k, cl_uint index, double v);
/* Enqueues a vector kernel on the solver's grid (or `groups` work-groups, when not 0). */
CMRSCL_HIDDEN cmrscl_status cmrs_solve_launch(cmrscl_solver s, cl_kernel k, size_t groups);
/* A renumbered matrix's vector moved between the caller's numbering and the device's on the
 * solver's queue (after what was enqueued before it): to_device dst = P src, else dst = P^T
 * src. */
CMRSCL_HIDDEN cmrscl_status cmrs_solve_renumber(cmrscl_solver s, bool to_device, cl_mem src,
                                                cl_mem dst);
/* A product with the epilogue (the method's product `which`, or any of the solver's product
 * kernels), and one plain (the matrix's own kernels): y = alpha A x + beta y. */
CMRSCL_HIDDEN cmrscl_status cmrs_solve_product(cmrscl_solver s, int which);
CMRSCL_HIDDEN cmrscl_status cmrs_solve_product_kernels(cmrscl_solver s, const product_kernels *k);
CMRSCL_HIDDEN cmrscl_status cmrs_solve_plain_product(cmrscl_solver s, double alpha, cl_mem x,
                                                     double beta, cl_mem y);
/* How the kernels after a product find its real4s (s->sums, chain, reduce_groups), from the
 * product's units and the device; and the products' fold cap (s->fold_cap). */
CMRSCL_HIDDEN void cmrs_solve_choose_sums(cmrscl_solver s);
/* Where a kernel after a product finds its real4s, and how many: the product's own, or
 * solve_reduce's (when the product's are too many). */
CMRSCL_HIDDEN void cmrs_solve_product_region(const cmrscl_solver s, cl_uint *at, cl_uint *count);
/* After a product: solve_reduce, where its real4s are too many for the next kernel. */
CMRSCL_HIDDEN cmrscl_status cmrs_solve_product_sums(cmrscl_solver s);
/* The common start: solve_start (p, rs where not NULL) and solve_init. */
CMRSCL_HIDDEN cmrscl_status cmrs_solve_start_common(cmrscl_solver s, cl_mem b, cl_mem x, cl_mem p,
                                                    cl_mem rs, cl_mem dinv);
/* The Jacobi preconditioner's inverse diagonal into s->dinv (made when missing or when the
 * matrix's values changed); ERROR_INVALID_MATRIX naming how many rows have none. */
CMRSCL_HIDDEN cmrscl_status cmrs_solve_jacobi(cmrscl_solver s);
/* Copies n values between buffers of the solver (queue order). */
CMRSCL_HIDDEN cmrscl_status cmrs_solve_copy(cmrscl_solver s, cl_mem from, cl_mem to);
/* GMRES_BLOCKS, GMRES's vector kernels (cl/solve_gmres.cl): 1 on CPUs, where a work-item takes
 * a block of consecutive rows and walks it a basis vector at a time, so that the compilers'
 * vector loop - the innermost loop of the kernel - runs along the rows; 0 elsewhere, rows the
 * grid apart, each a sum over the vectors, which keeps a warp's loads adjacent
 * (docs/dev/PERFORMANCE.md, GMRES_BLOCKS). CMRSCL_GMRES_BLOCKS=0|1 decides instead (the tests'
 * way to run either form on any device). A solver keeps what its program was built with
 * (gmres_blocks). */
CMRSCL_HIDDEN unsigned cmrs_solve_gmres_blocks(const cmrscl_solver s);
/* v = 0 (n values), enqueued. */
CMRSCL_HIDDEN cmrscl_status cmrs_solve_fill_zero(cmrscl_solver s, cl_mem v);

#endif /* CMRSCL_SOLVE_STAGE_H */
