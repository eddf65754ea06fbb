/* cmrs_abi.h - the contract between the host and the SpMV kernels, read by both compilers:
 * the host C files include it, and host/runtime/program.c puts it in front of every SpMV program.
 * It holds the codes of the build options, the sentinels stored in the matrix arrays and the
 * order of the kernels' arguments: change one here and both sides follow.
 * Plain C that OpenCL C accepts too (no includes, no stdint types). */
#ifndef CMRS_ABI_H
#define CMRS_ABI_H

/* -DKERNEL: the kernel family (the values of cmrscl_kernel). */
#define CMRS_KERNEL_STRIP 1
#define CMRS_KERNEL_SEGMENT 2
#define CMRS_KERNEL_MODULO 3
#define CMRS_KERNEL_SLICE 4

/* -DREDUCE: the backend of the warp layer (cl/warp.cl; the values of cmrscl_reduce). */
#define CMRS_REDUCE_LOCAL 1    /* local memory and work-group barriers */
#define CMRS_REDUCE_SHUFFLE 2  /* NVIDIA shfl.sync / vote.sync / bar.warp.sync (inline PTX) */
#define CMRS_REDUCE_SUBGROUP 3 /* OpenCL sub-groups */

/* -DVALUES: how the values are stored (the values of cmrscl_values). */
#define CMRS_VALUES_PLAIN 1    /* one per entry, in the matrix's precision */
#define CMRS_VALUES_FLOAT 2    /* doubles that are all floats, stored as floats */
#define CMRS_VALUES_DICT 3     /* a dictionary; each entry's index in its column word */
#define CMRS_VALUES_DIAGONAL 4 /* DICT off the diagonal; the diagonal's own array after it */
/* Zero entries stored after col_ind and after the values: the segment family reads entries
 * as vectors of up to this many, and the last vector may reach past nnz. */
#define CMRS_ENTRY_PAD 4

/* StripPtr's top bit at the entry index width (32 or 64) marks a long strip: the split
 * path's tiles cover its entries and the strip role skips it. */
#define CMRS_LONG_STRIP_BIT(index_bits) ((index_bits)-1)

/* tile_strip of a slot that pads a work-group's tiles (the in-group combine): no work. */
#define CMRS_NO_STRIP 0xffffffffu

/* col_ind of a hole of the MODULO and slice layouts: a stored position with no entry (value
 * 0; the kernel neither loads x nor adds for it). Never a real entry's col_ind: the plan
 * keeps the column field (above the row and dictionary bits) of these layouts from ever
 * being all ones. */
#define CMRS_HOLE 0xffffffffu

/* A hole among a slice's narrow columns (-DCOLUMN_BITS=16, host/format/cmrs_narrow.c): the
 * 16-bit word of all ones, which the plan keeps every real step and dictionary index below. */
#define CMRS_NARROW_HOLE 0xffffu

/* A jump among a slice's narrow columns (plans whose column_jumps is not 0, -DNARROW_JUMPS=1):
 * a word with its top bit set stands for no entry and adds its low 15 bits, shifted left by
 * CMRS_NARROW_JUMP_SHIFT, to the row's running column - so a step too long for an entry's
 * word costs one word more instead of every entry of the matrix taking a 32-bit word. The
 * entry after it keeps the step's low CMRS_NARROW_JUMP_SHIFT bits, which fit every entry's
 * step field (15 bits less a dictionary index of at most 4). The entries' words keep their
 * top bit clear; the hole (all ones) stays a hole. The shift does not depend on the
 * dictionary, so dropping one (a values update) leaves every jump as it is. */
#define CMRS_NARROW_JUMP 0x8000u
#define CMRS_NARROW_JUMP_SHIFT 11

/* The arguments of cmrs_spmv, the same in every family. The matrix's (set once when the
 * matrix is made) come first, then the product's (x, y, alpha, beta: set per product). */
enum cmrs_spmv_arg {
    CMRS_ARG_ROWS,
    CMRS_ARG_STRIPS,
    CMRS_ARG_FIRST_TILE_GROUP,
    CMRS_ARG_TILES,
    CMRS_ARG_TILE_ENTRIES,
    CMRS_ARG_STRIP_PTR, /* the matrix's buffers, in this order from here */
    CMRS_ARG_COL_IND,
    CMRS_ARG_ROW_IN_STRIP,
    CMRS_ARG_VALUES,
    CMRS_ARG_TILE_START,
    CMRS_ARG_TILE_STRIP,
    CMRS_ARG_PARTIAL,
    CMRS_ARG_X, /* the product's, from here */
    CMRS_ARG_Y,
    CMRS_ARG_ALPHA,
    CMRS_ARG_BETA,
    CMRS_ARG_COUNT
};

/* The arguments of cmrs_combine (split strips whose tiles a second kernel adds up). */
enum cmrs_combine_arg {
    CMRS_COMBINE_ROWS,
    CMRS_COMBINE_LONG_STRIPS,
    CMRS_COMBINE_LONG_STRIP,
    CMRS_COMBINE_FIRST_TILE,
    CMRS_COMBINE_PARTIAL,
    CMRS_COMBINE_Y, /* the product's, from here */
    CMRS_COMBINE_ALPHA,
    CMRS_COMBINE_BETA,
    CMRS_COMBINE_COUNT
};

/* The arguments of cmrs_spmm (cl/cmrs_spmm.cl): the matrix's, then the block product's. */
enum cmrs_spmm_arg {
    CMRS_SPMM_ROWS,
    CMRS_SPMM_STRIPS,
    CMRS_SPMM_TILES,
    CMRS_SPMM_TILE_ENTRIES,
    CMRS_SPMM_STRIP_PTR,
    CMRS_SPMM_COL_IND,
    CMRS_SPMM_ROW_IN_STRIP,
    CMRS_SPMM_VALUES,
    CMRS_SPMM_TILE_START,
    CMRS_SPMM_TILE_STRIP,
    CMRS_SPMM_PARTIAL, /* the block product's own: tiles x HEIGHT x the launch's vectors */
    CMRS_SPMM_X,       /* the product's, from here */
    CMRS_SPMM_X_ROW,
    CMRS_SPMM_X_VEC,
    CMRS_SPMM_Y,
    CMRS_SPMM_Y_ROW,
    CMRS_SPMM_Y_VEC,
    CMRS_SPMM_VEC_BEGIN,
    CMRS_SPMM_VEC_END,
    CMRS_SPMM_ALPHA,
    CMRS_SPMM_BETA,
    CMRS_SPMM_COUNT
};

/* The arguments of cmrs_spmm_combine: the tiles' sums of each long strip into Y. */
enum cmrs_spmm_combine_arg {
    CMRS_SPMM_COMBINE_ROWS,
    CMRS_SPMM_COMBINE_TILES,
    CMRS_SPMM_COMBINE_TILE_STRIP,
    CMRS_SPMM_COMBINE_PARTIAL,
    CMRS_SPMM_COMBINE_Y,
    CMRS_SPMM_COMBINE_Y_ROW,
    CMRS_SPMM_COMBINE_Y_VEC,
    CMRS_SPMM_COMBINE_VEC_BEGIN,
    CMRS_SPMM_COMBINE_VEC_END,
    CMRS_SPMM_COMBINE_ALPHA,
    CMRS_SPMM_COMBINE_BETA,
    CMRS_SPMM_COMBINE_COUNT
};

/* ---- the solvers (host/solve/, cl/dots.cl, cl/solve.cl) ----
 * A solve keeps its scalars, the partial sums of its dot products and its residual history
 * in one buffer of reals on the device, the workspace: a header of CMRS_WS_HEADER reals (the
 * slots below), then regions of partial sums, each a real4 (up to four dot products) per
 * work-group that wrote it, then the history. Kernels read the header and the partial sums
 * of earlier kernels; within one kernel, the header slots it writes (work-group 0 writes
 * them) are never the slots it reads, so no kernel races with itself.
 * That holds for the stop too: a kernel that can stop the solve has a stop slot of its own,
 * which it writes and never reads; it reads the others, and once one is set it copies that
 * code into its own (so the kernels after it see the stop whichever slots they read) and
 * returns. Slot 0 is solve_init's; the methods number theirs from 1 (host/solve/). */
/* CMRS_WS_STOP_SLOTS slots: 0 while the solve runs, else a CMRS_STOP_ code (every set slot
 * holds the same code) */
#define CMRS_WS_STOP 0
#define CMRS_WS_STOP_SLOTS 6
#define CMRS_WS_ITER 6         /* iterations done */
#define CMRS_WS_RR 7           /* the residual norm squared at the last check, ||r||^2 */
#define CMRS_WS_THRESHOLD 8    /* the solve stops once ||r||^2 <= this */
#define CMRS_WS_BB 9           /* ||b||^2 */
#define CMRS_WS_VALUE 10       /* the value that stopped a breakdown (p.Ap, rho, omega) */
#define CMRS_WS_BAD_B 11       /* entries of b that are NaN or Inf */
#define CMRS_WS_BAD_X 12       /* entries of x0 that are NaN or Inf */
#define CMRS_WS_RHO 13         /* BiCGStab: rho = (r0*, r) of the current iteration */
#define CMRS_WS_RHO_PREV 14    /* ... the rho that alpha used, kept for beta */
#define CMRS_WS_ALPHA 15       /* ... alpha */
#define CMRS_WS_OMEGA 16       /* ... omega */
#define CMRS_WS_ZERO_B 17      /* 1 when b = 0: x = 0 is the answer (the host zeroes x) */
#define CMRS_WS_CAUSE 18       /* which of a method's quantities broke down (its own codes) */
#define CMRS_WS_HISTORY_CAP 19 /* entries the history holds: later iterations record none */
#define CMRS_WS_HEADER 24      /* reals before the first region of partial sums */

/* Why a solve stopped (CMRS_WS_STOP). */
#define CMRS_STOP_CONVERGED 1 /* ||r|| <= max(rtol ||b||, atol) */
/* a division by zero ahead: CG's p.Ap <= 0, BiCGStab's rho or (r0*, v) or omega = 0 (the
 * value in CMRS_WS_VALUE) */
#define CMRS_STOP_BREAKDOWN 2
#define CMRS_STOP_NONFINITE 3 /* a scalar of the recurrence became NaN or Inf */
#define CMRS_STOP_BAD_INPUT 4 /* b or x0 holds NaN or Inf (counts in CMRS_WS_BAD_B, _X) */

/* -DDOTS: the product's epilogue for solvers (cl/dots.cl). 0: none; 2: x.y and y.y of
 * y = alpha*A*x + beta*y; 4: also w.y and y.(w*y) for a vector w; 1: w.y alone (the third
 * of the four sums, where DOTS 4 leaves it; the others 0). The kernels then take
 * these arguments after their own (cmrs_spmv after CMRS_ARG_COUNT, cmrs_combine after
 * CMRS_COMBINE_COUNT): */
enum cmrs_dots_arg {
    CMRS_DOTS_WS, /* the workspace: the kernel does nothing once a stop slot is set */
    CMRS_DOTS_AT, /* uint: where in it the kernel's first work-group's real4 goes */
    CMRS_DOTS_W,  /* w (DOTS 1 and 4) */
    CMRS_DOTS_COUNT
};
/* ... and cmrs_combine these after its own and those (cl/combine.cl, COMBINE_FOLDS): */
enum cmrs_combine_dots_arg {
    CMRS_COMBINE_DOTS_X = CMRS_DOTS_COUNT, /* the product's x */
    CMRS_COMBINE_FOLD_AT, /* uint: where the first kernel's real4s lie, which it adds up */
    CMRS_COMBINE_FOLD_N,  /* uint: ... how many */
    CMRS_COMBINE_DOTS_COUNT
};
/* -DCG_FUSED=1 (2: with the Jacobi preconditioner): the slice family's cmrs_spmv as a whole
 * CG iteration (cl/cg_fused.cl) - x is the direction p it reads, y the q = A p' it writes,
 * alpha 1 and beta 0 - taking these arguments after its own: */
enum cmrs_fused_arg {
    CMRS_FUSED_WS,     /* the workspace */
    CMRS_FUSED_RR_AT,  /* uint: the real4s of r.r and r.z it reads (s0, s1) */
    CMRS_FUSED_RR_N,   /* uint: ... how many */
    CMRS_FUSED_PQ_AT,  /* uint: the real4s of p.q and q.q (s0, s1) or q.Dq (s3) it reads */
    CMRS_FUSED_PQ_N,   /* uint: ... how many */
    CMRS_FUSED_RR_OUT, /* uint: where its work-groups' real4s of r'.r' and r'.z' go */
    CMRS_FUSED_PQ_OUT, /* uint: ... of p'.q' and q'.q' (q'.Dq' in s1 and s3) */
    CMRS_FUSED_R_IN,   /* r and q it reads, r' and p' it writes (other buffers than r, p) */
    CMRS_FUSED_Q_IN,
    CMRS_FUSED_R_OUT,
    CMRS_FUSED_P_OUT,
    CMRS_FUSED_SOLUTION,  /* x, updated in place */
    CMRS_FUSED_DINV,      /* the inverse diagonal (CG_FUSED 2) */
    CMRS_FUSED_HISTORY,   /* uint: where the residual history starts */
    CMRS_FUSED_STOP_SLOT, /* uint: its stop slot */
    CMRS_FUSED_COUNT
};
#define CMRS_COMBINE_GROUP 64 /* work-items of a cmrs_combine work-group */
#define CMRS_GMRES_MAX 256    /* GMRES's longest cycle (CMRSCL_MAX_RESTART) */

#endif /* CMRS_ABI_H */
