/* cmrscl_solve.h - solving A x = b on the device: conjugate gradients (with or without a
 * Jacobi preconditioner), BiCGStab and restarted GMRES(m), above the products (host/solve/).
 * Included by cmrscl.h; include that, not this file.
 *
 * Every vector stays on the device, and an iteration is its product - the matrix's own
 * kernel family, built again with an epilogue that leaves the dot products the step needs
 * (cl/dots.cl) - and one or two kernels that do the rest of the step at once: they add up
 * those partial sums, compute the method's scalars on the device, test for convergence and
 * breakdown, update the vectors and leave the next partial sums (cl/solve.cl). CG is two
 * launches an iteration, BiCGStab five, GMRES four, with one more (a reduction of its partial
 * sums) after each of CG's and BiCGStab's products of matrices whose products run more work-groups
 * than the solver's kernels add up themselves (docs/dev/PERFORMANCE.md, SOLVE_FOLD_LIMIT). The host
 * enqueues iterations ahead and reads a few bytes of state every check_interval iterations; once
 * the device has stopped the solve, the iterations still enqueued return at once. Sums have a fixed
 * order: the same solve gives the same bits run after run.
 *
 * Stopping: ||r|| <= max(rtol ||b||, atol), r the method's residual recurrence (CG's r;
 * with Jacobi ||r||, not ||r||_D), tested before each iteration. The recurrence is then
 * checked: the true residual ||b - A x|| is computed by a product, and where it misses the
 * threshold (the recurrence drifted from it by rounding: low precision, ill-conditioned
 * matrices) the method starts again from x with r = b - A x while iterations remain and each
 * such pass at least halves the true residual. CONVERGED means the true residual met the
 * threshold; DRIFTED that the recurrence's did and the true one could not.
 */
#ifndef CMRSCL_SOLVE_H
#define CMRSCL_SOLVE_H

#include "cmrscl.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cmrscl_method {
    CMRSCL_METHOD_CG = 0,       /* conjugate gradients: A symmetric positive definite */
    CMRSCL_METHOD_BICGSTAB = 1, /* BiCGStab (van der Vorst): any nonsingular A */
    CMRSCL_METHOD_GMRES = 2     /* GMRES(restart), classical Gram-Schmidt: any A */
} cmrscl_method;

typedef enum cmrscl_preconditioner {
    CMRSCL_PRECONDITIONER_NONE = 0,
    /* Jacobi: D^-1 with D the matrix's diagonal, taken from the device matrix when the solver
     * is created (and again after a values update); CG only. A zero diagonal entry fails. */
    CMRSCL_PRECONDITIONER_JACOBI = 1,
    /* the preconditioner object in cmrscl_solve_options.precond (cmrscl_precond.h: AMG), of
     * the matrix's context, precision and rows, on the context's queue. CG's iteration is then
     * the textbook's preconditioned CG: four launches and the V-cycle's; BiCGStab and GMRES
     * take it on the right (x = M u; their residual stays b - A x): two cycles a BiCGStab
     * iteration, one a GMRES step and one more a restart cycle. */
    CMRSCL_PRECONDITIONER_AMG = 2
} cmrscl_preconditioner;

/* Called on the host at each check with the iterations done and the residual norm then;
 * with a monitor the host waits for each check before it enqueues the next update of x, so x
 * on the device is that of `iterations` while it runs (CG, BiCGStab; GMRES forms x at the end
 * of a cycle only; a renumbered matrix's solver, cmrscl_renumber, writes x at the end). The device
 * meanwhile runs the launches that do not write x (the next product, a preconditioner), so a
 * monitor that reads nothing costs about a round trip to the device less than the product's time; a
 * read of x queues behind them. */
typedef void (*cmrscl_solve_monitor)(void *data, int iterations, double residual);

/* Zero-initialised options mean CG, no preconditioner, rtol 1e-5, at most 10 x rows
 * iterations, checks every few iterations as measured, GMRES(20). NULL is the same. */
typedef struct cmrscl_solve_options {
    cmrscl_method method;
    cmrscl_preconditioner preconditioner;
    /* Converged when ||r|| <= max(rtol ||b||, atol); both 0: rtol 1e-5 (scipy's default).
     * Negative or NaN fails with ERROR_INVALID_ARGUMENT. */
    double rtol, atol;
    /* Iterations at most (GMRES: inner iterations, products with A); 0: 10 x rows, at most
     * 2^24 (in float the device counts iterations in floats). */
    int max_iterations;
    /* Iterations between the host's checks; 0: chosen from the measured cost of a check and
     * of an iteration, growing with the square root of the iterations done (the interval
     * that balances the checks' cost against the iterations run past convergence). */
    int check_interval;
    int restart; /* GMRES: Krylov vectors per cycle, 1..CMRSCL_MAX_RESTART; 0: 20 (scipy's) */
    cmrscl_solve_monitor monitor;
    void *monitor_data;
    cmrscl_precond precond; /* CMRSCL_PRECONDITIONER_AMG's (borrowed: free it after the solver) */
} cmrscl_solve_options;
#define CMRSCL_MAX_RESTART 256

/* Why a solve ended. */
typedef enum cmrscl_solve_reason {
    CMRSCL_SOLVE_CONVERGED = 0,
    CMRSCL_SOLVE_MAX_ITERATIONS = 1, /* not converged after max_iterations */
    CMRSCL_SOLVE_BREAKDOWN = 2,      /* a division by zero ahead (ERROR_BREAKDOWN) */
    CMRSCL_SOLVE_NONFINITE = 3,      /* a scalar became NaN or Inf (ERROR_BREAKDOWN) */
    CMRSCL_SOLVE_BAD_INPUT = 4,      /* NaN or Inf in b or x0 (ERROR_INVALID_ARGUMENT) */
    /* not converged: the recurrence's residual met the threshold and ||b - A x||, give or take
     * its rounding (true_residual_rounding), did not, even after restarts from it (the
     * precision's limit for this matrix; CMRSCL_OK) */
    CMRSCL_SOLVE_DRIFTED = 5
} cmrscl_solve_reason;

typedef struct cmrscl_solve_result {
    cmrscl_solve_reason reason;
    int converged;   /* reason == CONVERGED: true_residual + true_residual_rounding <= threshold */
    int iterations;  /* done (GMRES: inner iterations) */
    double residual; /* ||r|| of the recurrence at the end (GMRES: its estimate) */
    double true_residual;       /* ||b - A x|| of the x returned, from a product after the solve */
    double b_norm;              /* ||b|| */
    double threshold;           /* max(rtol ||b||, atol): converged when residual <= threshold */
    double breakdown;           /* BREAKDOWN, NONFINITE: the value that stopped it */
    double seconds;             /* the whole call: set-up, iterations, the true residual */
    double iterate_seconds;     /* the iterations alone: / iterations is the time per iteration */
    int launches_per_iteration; /* kernels enqueued per iteration (GMRES: averaged) */
    int checks;                 /* the host's reads of the solve's state */
    int check_interval;         /* the last interval between them */
    /* ||r_k|| for k = 0..history_length-1 (history_length = iterations + 1; GMRES: the
     * estimates), read back once at the end; malloc'ed, freed by cmrscl_solve_result_free. */
    double *history;
    int history_length;
    /* restarts from the true residual: passes after the first, each begun where the
     * recurrence's residual had met the threshold and ||b - A x|| had not (its history entry
     * is then ||b - A x||) */
    int replacements;
    /* The rounding of true_residual in the solver's precision: ||b - A x|| taken a second time
     * from 3 x rounded anew, how far the two residuals part. Measured where the recurrence
     * converged; converged asks true_residual + true_residual_rounding <= threshold, so that
     * another evaluation of ||b - A x|| (another order of the sums, the CPU's in double) meets
     * the threshold too. 0 where not measured. */
    double true_residual_rounding;
} cmrscl_solve_result;

/* A solver of one square matrix with options: its kernels built and its work vectors made
 * once (a few vectors of rows values, plus GMRES's restart + 1), for any number of solves.
 * The matrix is borrowed: free the solver first. A values update of the matrix is seen by
 * the next solve (the Jacobi diagonal is taken again). */
typedef struct cmrscl_solver_s *cmrscl_solver;
CMRSCL_API cmrscl_status cmrscl_solver_create(cmrscl_matrix m, const cmrscl_solve_options *opt,
                                              cmrscl_solver *out);
/* Solves A x = b on buffers of the matrix's precision and context with at least rows
 * elements: x holds x0 on entry and the solution on return. Enqueued on `queue` (NULL: the
 * context's; any other must be of the matrix's context and device) after the wait list, and
 * returns when x is written. CMRSCL_OK when the solve ran to convergence or to max_iterations
 * (out->reason says which); ERROR_BREAKDOWN, or ERROR_INVALID_ARGUMENT for NaN or Inf in b or
 * x0, with *out filled all the same (x holds the last iterate). b and x must differ. */
CMRSCL_API cmrscl_status cmrscl_solver_solve(cmrscl_solver s, cl_mem b, cl_mem x,
                                             cl_command_queue queue, cl_uint num_wait,
                                             const cl_event *wait_list, cmrscl_solve_result *out);
/* The same on host arrays of the matrix's precision (b and x copied in, x copied back). */
CMRSCL_API cmrscl_status cmrscl_solver_solve_host(cmrscl_solver s, const void *b, void *x,
                                                  cmrscl_solve_result *out);
CMRSCL_API void cmrscl_solver_free(cmrscl_solver s);

/* One solve with a solver made and freed for it. */
CMRSCL_API cmrscl_status cmrscl_solve(cmrscl_matrix m, const cmrscl_solve_options *opt, cl_mem b,
                                      cl_mem x, cmrscl_solve_result *out);
CMRSCL_API cmrscl_status cmrscl_solve_host(cmrscl_matrix m, const cmrscl_solve_options *opt,
                                           const void *b, void *x, cmrscl_solve_result *out);
/* Frees the history and zeroes the struct (NULL and a zeroed struct are no-ops). */
CMRSCL_API void cmrscl_solve_result_free(cmrscl_solve_result *r);

/* "cg", "bicgstab", "gmres"; NULL for others. */
CMRSCL_API const char *cmrscl_method_name(cmrscl_method method);
/* "converged", "max iterations", "breakdown", "NaN or Inf", "NaN or Inf in b or x0",
 * "drifted". */
CMRSCL_API const char *cmrscl_solve_reason_name(cmrscl_solve_reason reason);

#ifdef __cplusplus
}
#endif
#endif /* CMRSCL_SOLVE_H */
