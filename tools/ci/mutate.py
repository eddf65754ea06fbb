#!/usr/bin/env python3
"""mutate.py - the suite must fail when the code is wrong: deliberate bugs, one at a time.

    tools/ci/mutate.py [--work DIR] [--device SELECTOR] [--only NAME[,NAME...]] [--list]

Copies the working tree (tracked and untracked-but-not-ignored files) to DIR/src, builds it
once in DIR/build (Release), then for each mutation below: applies it (its text must occur
exactly once - a mutation that no longer applies is an error, not a pass), rebuilds, runs the
CTest tests it names and, where Python reaches the bug, the Python tests it names (against
the mutated library), and restores the file. A mutation survives when every test it ran
passed. Prints a table and exits 1 when any survived or failed to apply. Run by hand (a few
minutes a mutation on a 2-core CPU with PoCL, CMRSCL_DEVICE as the suite takes it); not part
of CI's time. Standard library only.
"""
import argparse
import os
import shutil
import subprocess
import sys
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Mutation:
    def __init__(self, name, path, old, new, ctest, python=None):
        self.name, self.path, self.old, self.new = name, path, old, new
        self.ctest, self.python = ctest, python


MUTATIONS = [
    # issue 45's table
    Mutation("beta 1 drops alpha", "cl/spmv_common.cl",
             "const real_t v = beta == (real_t)0 ? alpha * sum : alpha * sum + beta * y[row];",
             "const real_t v = beta == (real_t)0 ? alpha * sum : beta == (real_t)1 ? sum + y[row]"
             " : alpha * sum + beta * y[row];",
             "^(kernel_float_strip_packed_local|spmm_float|recording_enqueue|transpose_float)$",
             "python/tests/test_products.py::test_matvec_every_matrix"),
    Mutation("the checker never rejects", "host/io/csr.c",
             "        *bound_ratio = worst;", "        *bound_ratio = 0.0 * worst;",
             "^(check)$"),
    Mutation("slice: each row's last column dropped", "cl/cmrs_slice.cl",
             ": j + k * HEIGHT < end ? LOAD_WORD(j + k * HEIGHT)",
             ": j + k * HEIGHT + HEIGHT < end ? LOAD_WORD(j + k * HEIGHT)",
             "^(kernel_float_slice_local|spmm_float|transpose_float|recording_enqueue)$",
             "python/tests/test_products.py::test_every_family"),
    Mutation("slice, several rows a work-item: each row's last position dropped",
             "cl/cmrs_slice.cl",
             "for (index_t j = strip_ptr[strip] + r0; j < end; j += HEIGHT) {",
             "for (index_t j = strip_ptr[strip] + r0; j + HEIGHT < end; j += HEIGHT) {",
             "^(kernel_float_slice_local)$"),
    Mutation("slice, several rows a work-item: the narrow walk's column not kept", "cl/cmrs_slice.cl",
             "                columns[i] = column;\n", "\n",
             "^(kernel_float_slice_local)$"),
    Mutation("slice, several rows a work-item: work-items' rows overlap", "cl/cmrs_slice.cl",
             "const uint r0 = get_local_id(0) % WARP * SLICE_ROWS;",
             "const uint r0 = get_local_id(0) % WARP;",
             "^(kernel_float_slice_local)$"),
    Mutation("strip: rows 0 and 1 swapped", "cl/cmrs_strip.cl",
             "const uint r##k = e##k.y; ",
             "const uint r##k = e##k.y < 2u ? e##k.y ^ 1u : e##k.y; ",
             "^(kernel_float_strip_packed_local|spmm_float|recording_enqueue|holes_float)$",
             "python/tests/test_products.py::test_every_family"),
    Mutation("dictionary: value 1 read at index 0", "cl/spmv_common.cl",
             "#define DICT_AT(i, col) val[i]", "#define DICT_AT(i, col) val[(i) == 1u ? 0u : (i)]",
             "^(kernel_float_strip_packed_local|spmm_float|recording_enqueue)$",
             "python/tests/test_products.py::test_matvec_every_matrix"),
    Mutation("the diagonal apart: its entries read the row before's value", "cl/spmv_common.cl",
             "val[(i) == DICT_MASK ? (1u << DICT_BITS) + (col) : (i)]",
             "val[(i) == DICT_MASK ? (1u << DICT_BITS) + (col) + ((col) > 0u ? -1u : 0u) : (i)]",
             "^(kernel_float_strip_packed_local|kernel_double_slice_local|cli_spmv_values_diagonal|dict_limits_double)$",
             "python/tests/test_products.py::test_diagonal_apart"),
    # the last tile's combine (issue 58)
    Mutation("last tile's combine: the first share of each row left out", "cl/combine.cl",
             "for (uint k = 0; k < LAST_SHARES; ++k)", "for (uint k = 1; k < LAST_SHARES; ++k)",
             "^(kernel_float_split_strip_local|kernel_double_split_segment_local)$"),
    Mutation("last tile's combine: a strip's count never set back", "cl/combine.cl",
             "            count[t0] = 0;", "            count[t0] = count[t0];",
             "^(kernel_float_split_strip_local|recording_enqueue)$"),
    Mutation("last tile's combine: a strip's solver terms dropped", "cl/combine.cl",
             "vstore4(terms, get_num_groups(0) + t0, ws + dots_at);",
             "vstore4(terms * (real_t)0, get_num_groups(0) + t0, ws + dots_at);",
             "^(dots_float_local|dots_double_local)$"),
    # the combine kernel adds the product's sums up (issue 58)
    Mutation("combine kernel: the first kernel's sums not added", "cl/combine.cl",
             "        acc += vload4(u, ws + fold_at);", "        acc += (real4_t)0;",
             "^(dots_float_local|dots_double_local)$"),
    Mutation("combine kernel: one work-group's share of the sums left out", "cl/combine.cl",
             "const uint begin = get_group_id(0) * share, end = min(begin + share, fold_n);",
             "const uint begin = get_group_id(0) * share, end = min(begin + share, fold_n) - (get_group_id(0) == 1 ? 1 : 0);",
             "^(dots_float_local|dots_double_local|solve_double)$"),
    Mutation("combine kernel: the last of the first kernel's sums left out", "cl/combine.cl",
             "const uint begin = get_group_id(0) * share, end = min(begin + share, fold_n);",
             "const uint begin = get_group_id(0) * share, end = min(begin + share, fold_n - 1);",
             "^(dots_float_local|dots_double_local|solve_double)$"),
    Mutation("combine kernel: every other of a share's sums skipped", "cl/combine.cl",
             "u += CMRS_COMBINE_GROUP)", "u += 2 * CMRS_COMBINE_GROUP)",
             "^(dots_float_local|dots_double_local|solve_double)$"),
    # AMG's long rows sorted by a work-group (issue 57)
    Mutation("AMG device sort: a long row's first column never counted smaller", "cl/spgemm.cl",
             "                rank += lc[m] < c;", "                rank += lc[m] < c && m > 0;",
             "^amg_galerkin$"),
    Mutation("AMG device sort: rows past the local memory left unsorted", "cl/spgemm.cl",
             "            if (l == 0)\n                sort_row(col, val, begin, begin + n);",
             "            if (l == 0 && n < 0)\n                sort_row(col, val, begin, begin + n);",
             "^amg_galerkin$"),
    # the local tables' fill and the public product (SPGEMM_LOCAL, cmrscl_csr_multiply)
    Mutation("sparse product: a local row's entry placed one past its rank", "cl/spgemm.cl",
             "            rank += (uint)LSLOT(keys, m) < (uint)j;",
             "            rank += (uint)LSLOT(keys, m) <= (uint)j;", "^(amg_galerkin|multiply)$"),
    Mutation("sparse product: the local fill taken for a row one past the local tables",
             "host/precond/amg_galerkin.c",
             "    const bool local = g->fill_local && longest <= g->local_slots;",
             "    const bool local = g->fill_local && longest <= g->local_slots + 1;",
             "^(amg_galerkin|multiply)$"),
    Mutation("C = A B: B's shape taken for A's columns unchecked", "host/precond/multiply.c",
             "    if (st == CMRSCL_OK && a->cols != b->rows)",
             "    if (st == CMRSCL_OK && a->cols != b->rows && a->cols < 0)", "^multiply$"),
    Mutation("AMG builder: an R left on the device never read back", "host/precond/amg_builder.c",
             "    if (r->row_ptr)\n        return;\n    if (d->ptr && cmrs_device_csr_download",
             "    if (r->row_ptr || d)\n        return;\n    if (d->ptr && cmrs_device_csr_download",
             "^amg_galerkin$"),
    # AMG's aggregation in blocks (issue 57)
    Mutation("AMG aggregation: the rows at the blocks' edges never taken up again",
             "host/precond/amg_aggregate.c",
             "            pass1_row(s, aggregate, job.root, job.later[k], 0, s->rows);",
             "            (void)0;", "^amg_aggregate$"),
    Mutation("AMG aggregation: a block roots where a neighbour lies beyond it",
             "host/precond/amg_aggregate.c",
             "    if (beyond)\n        return true;", "    (void)beyond;", "^amg_aggregate$"),
    Mutation("AMG aggregation: pass 3 skips the pieces pass 2 left a row free in",
             "host/precond/amg_aggregate.c",
             "counted += agg[i] == FREE;", "counted += 0;", "^amg_aggregate$"),
    Mutation("AMG spread check: a long row's aggregates counted with repeats",
             "host/precond/amg_aggregate.c",
             "touched += copy[k] >= 0 && (k == 0 || copy[k] != copy[k - 1]);",
             "touched += copy[k] >= 0;", "^amg_aggregate$"),
    Mutation("AMG diagonal: the zeros stored off the diagonal never noted",
             "host/precond/amg_rho.c", "zeros |= a->values[k] == 0;", "zeros |= false;",
             "^amg_aggregate$"),
    Mutation("AMG nodes: a column's last square kept, not their sum",
             "host/precond/amg_nodes.c", "sum += a->values[at[r]] * a->values[at[r]];",
             "sum = a->values[at[r]] * a->values[at[r]];", "^amg_aggregate$"),
    Mutation("AMG nodes: rows whose columns are out of order merged as if they ascended",
             "host/precond/amg_nodes.c", "    if (!rows_ascend(j, first, rows))",
             "    if (false)", "^amg_aggregate$"),
    Mutation("AMG set-up: a matrix whose rows are not in order taken as it is",
             "host/precond/amg_setup.c", "    if (st == CMRSCL_OK && !canonical)\n        st = cmrs_csr_canonical_copy(a, &copy);",
             "    canonical = true;", "^amg_aggregate$"),
    Mutation("AMG products: one no longer wanted never given up", "host/precond/amg_spgemm.c",
             "    if (!j->stop || !atomic_load_explicit(j->stop, memory_order_relaxed))",
             "    if (true)", "^amg_setup$"),
    # AMG's operators made from the GPU's copies (issue 57)
    Mutation("AMG builder: the next level's A made from R's copy", "host/precond/amg_builder.c",
             "hold_there(b, level + 1, AMG_OPERATOR_A, &next_a);",
             "hold_there(b, level + 1, AMG_OPERATOR_A, &r_there);",
             "^(amg_galerkin)$"),
    # the solvers (issue 40)
    Mutation("dots: row 0 left out of x.y", "cl/dots.cl",
             "acc.s0 += x[row] * yv;", "acc.s0 += row ? x[row] * yv : (real_t)0;",
             "^(dots_float_local|solve_double)$",
             "python/tests/test_linalg.py::test_solvers_agree_with_scipy"),
    Mutation("CG: x moved along r, not p", "cl/solve.cl",
             "PAIR(x, k) = xv + alpha * pv;", "PAIR(x, k) = xv + alpha * rv;",
             "^(solve_float|solve_double)$",
             "python/tests/test_linalg.py::test_solvers_agree_with_scipy"),
    Mutation("chain: a chunk's counter never reset", "cl/dots.cl",
             "        chain_reset(counters, chunk);", "        (void)0;",
             "^(solve_double|oclgrind_chain_float)$"),
    # the transposed product (issue 21)
    Mutation("transposed product: beta dropped on the host path", "host/exec/product.c",
             "0, 0, alpha, beta, &d);\n    return st == CMRSCL_OK ? on_host(&d, x, y) : st;",
             "0, 0, alpha, op == CMRSCL_TRANSPOSE ? 0.0 * beta : beta, &d);\n"
             "    return st == CMRSCL_OK ? on_host(&d, x, y) : st;",
             "^(transpose_float)$",
             "python/tests/test_products.py::test_matvec_every_matrix"),
    # the codings' and the parser's limits (issue 56): tests that fail by construction
    Mutation("narrow steps: the all-ones word taken as a step", "host/plan/plan_values.c",
             "    int64_t limit = (1ll << field) - 2;", "    int64_t limit = (1ll << field) - 1;",
             "^(narrow_limits_float|narrow_limits_double)$"),
    Mutation("dictionary: a leading 0.0 dropped", "host/format/values_codec.c",
             "if (k == begin || b != last) /* runs of one value are the common case */",
             "if (b != last) /* runs of one value are the common case */",
             "^(dict_limits_float|dict_limits_double)$"),
    Mutation("parser: column index 0 let through", "host/io/mtx_parser.c",
             "    if (!q || c < 1 || c > ps->cols)", "    if (!q || c < 0 || c > ps->cols)",
             "^(mtx_index)$"),
    # the solvers' reports (issue 56)
    Mutation("solve: atol compared with ||r||^2 unsquared", "cl/solve.cl",
             "ws[CMRS_WS_THRESHOLD] = scaled > atol * atol ? scaled : atol * atol;",
             "ws[CMRS_WS_THRESHOLD] = scaled > atol ? scaled : atol;",
             "^(solve_trust_float|solve_trust_double)$"),
    Mutation("solve: Jacobi's diagonal of the row before in the odd row", "cl/solve.cl",
             "zv = dinv ? dinv[i] * rv : rv;", "zv = dinv ? dinv[i - 1] * rv : rv;",
             "^(solve_trust_double)$"),
    Mutation("GMRES: the orthogonalisation's products rounded to float", "cl/solve_gmres.cl",
             "acc[k] += v0[k * (size_t)stride + i] * wi;",
             "acc[k] += (float)(v0[k * (size_t)stride + i] * wi);",
             "^(solve_trust_double)$"),
    Mutation("GMRES on CPUs: the orthogonalisation's products rounded to float",
             "cl/solve_gmres.cl", "a += vk[i] * w[i];", "a += (float)(vk[i] * w[i]);",
             "^(solve_trust_double)$"),
    Mutation("solve: converged on the recurrence alone", "host/solve/solve_run.c",
             "        if (!certified(res, res->threshold)) {",
             "        if (res->true_residual < 0) {",
             "^(solve_trust_float|solve_trust_double)$"),
    Mutation("solve: converged by less than the true residual's rounding", "host/solve/solve_run.c",
             "return res->true_residual + res->true_residual_rounding <= threshold;",
             "return res->true_residual <= threshold;",
             "^(solve_trust_double)$"),
    Mutation("AMG: the candidates not made orthogonal on an aggregate",
             "host/precond/amg_tentative.c", "v[m] -= dot * u[m];", "v[m] -= 0 * dot * u[m];",
             "^(amg_setup)$"),
    Mutation("AMG T: the coarse numbering starts again in every piece of aggregates",
             "host/precond/amg_tentative.c",
             "int64_t begin, end, at = j->number ? j->piece_kept[piece] : 0;",
             "int64_t begin, end, at = 0;", "^amg_aggregate$"),
    Mutation("AMG symmetry on the device: a mirror not stored taken as equal", "cl/amg_rho.cl",
             "a_col[lo] == i ? a_val[lo] : 0.0;", "a_col[lo] == i ? a_val[lo] : a_val[k];",
             "^amg_galerkin$"),
    Mutation("AMG symmetry on the device: a row's last entry never compared", "cl/amg_rho.cl",
             "for (int k = a_ptr[i]; k < a_ptr[i + 1]; ++k) {\n        const int j = a_col[k];",
             "for (int k = a_ptr[i]; k + 1 < a_ptr[i + 1]; ++k) {\n        const int j = a_col[k];",
             "^amg_galerkin$"),
    Mutation("AMG: a node's unknowns not kept in one aggregate", "host/precond/amg_setup.c",
             "lv->aggregate[i] = of_node[n];", "lv->aggregate[i] = of_node[i % lv->nodes];",
             "^(amg_setup)$"),
    Mutation("AMG update: the aggregates counted as the coarse level's rows",
             "host/precond/amg_setup.c", "out->count[l] = h->level[l].aggregates;",
             "out->count[l] = h->level[l + 1].A.rows;", "^(amg_setup)$"),
    Mutation("a preconditioner of another precision taken", "host/precond/precond_api.c",
             "    if (p->precision != precision || p->rows != rows)",
             "    if (p->rows != rows)", "^(solve_amg_float|solve_amg_double|mpi_solve_3)$"),
    Mutation("transpose by rows: the threads' slots in a column in reverse order",
             "host/io/csr.c", "            for (int u = 0; u < j->threads; ++u) {",
             "            for (int u = j->threads - 1; u >= 0; --u) {",
             "^(transpose_float)$"),
    Mutation("sparse product: the accumulator not cleared after a row",
             "host/precond/amg_spgemm.c", "            sum[c->col_ind[k]] = 0;",
             "            (void)0;", "^(amg_setup)$"),
    Mutation("the reference: the rows' rounding not carried", "host/io/csr.c",
             "    return isfinite(next) ? next + rest : next;", "    return next;", "^(check)$"),
    Mutation("solve: a monitor's x one update ahead", "host/solve/solve_run.c",
             "st = s->method->iterate(s, i, max, ITER_AHEAD);",
             "st = s->method->iterate(s, i, max, ITER_AHEAD | ITER_X);",
             "^(solve_errors_double)$",
             "python/tests/test_linalg_scipy.py::test_callback_sees_each_iterate"),
    Mutation("AMG update: the device keeps the old values", "host/precond/precond_api.c",
             "        st = cmrs_amg_device_update(&p->device, &h);", "        st = CMRSCL_OK;",
             "^(solve_amg_double|solve_amg_float)$"),
    Mutation("AMG: the constant candidate on every level", "host/precond/amg_setup.c",
             "count, lv->near_null,", "count, NULL,", "^(amg_setup)$",
             "python/tests/test_pyamg.py"),
    Mutation("BiCGStab with AMG: omega from t.(M s) instead of t.s", "host/solve/solve_bicgstab.c",
             "count, ts_w = m;", "count, ts_w = 0;", "^(solve_amg_double)$"),
    Mutation("AMG Chebyshev: the first step's scale for every step", "host/precond/amg_cycle.c",
             "        *c1 = next * r, *c2 = 2 * next / delta;", "        *c1 = next * r;",
             "^(amg_setup|amg_device_double|amg_device_float|solve_amg_double)$"),
    Mutation("AMG rho: the power method for symmetric A too", "host/precond/amg_setup.c",
             "h->symmetric, o->rho_steps,", "false, o->rho_steps,", "^(amg_setup)$",
             "python/tests/test_pyamg.py"),
    Mutation("GMRES with AMG: the cycle's end adds M (V y) without M", "host/solve/solve_gmres.c",
             "st = cmrs_solve_precondition(s, s->vec[W], s->vec[Z]);",
             "st = cmrs_solve_copy(s, s->vec[W], s->vec[Z]);", "^(solve_amg_double)$",
             "python/tests/test_linalg_scipy.py::test_bicgstab_with_amg"),
    Mutation("GMRES on CPUs: the block form of gmres_orth skips v_0", "cl/solve_gmres.cl",
             "    for (uint k = 0; k <= j; ++k) {\n        const real_t hk = h[k];",
             "    for (uint k = 1; k <= j; ++k) {\n        const real_t hk = h[k];",
             "^(solve_double|solve_float)$"),
    Mutation("group rounds: a capped grid's work-group skips every other group", "cl/dots.cl",
             "         g < g##_count; g += get_num_groups(0))",
             "         g < g##_count; g += 2 * get_num_groups(0))",
             "^(dots_float_local|dots_double_local)$"),
    Mutation("AMG symmetry: only the entries above the diagonal compared",
             "host/precond/amg_rho.c", "if (a->col_ind[k] != i && entry(",
             "if (a->col_ind[k] > i && entry(", "^(amg_setup)$"),
    Mutation("AMG rho: Lanczos without beta p", "host/precond/amg_rho.c",
             "bp = j->beta * j->sp,", "bp = 0 * j->sp,", "^(amg_setup)$"),
    Mutation("solver products: a segment grid past the fold limit keeps its full grid",
             "host/exec/spmv_dots.c", "            cap = fold_cap;", "            cap = 0;",
             "^(solve_double|solve_float)$"),
    Mutation("upload ring: every chunk written at the array's start", "host/runtime/upload.c",
             "clEnqueueWriteBuffer(ctx->queue, dst, CL_FALSE, at, job.n,",
             "clEnqueueWriteBuffer(ctx->queue, dst, CL_FALSE, 0, job.n,", "^(concurrency)$"),
]


def run(cmd, cwd=None, env=None, log=None):
    """Runs cmd; returns (status, output)."""
    p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(f"$ {' '.join(cmd)}\n{p.stdout}\n")
    return p.returncode, p.stdout


def copy_tree(dest):
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=TOP,
                           stdout=subprocess.PIPE, check=True).stdout.split(b"\0")
    for f in filter(None, (x.decode() for x in files)):
        src = os.path.join(TOP, f)
        if os.path.isfile(src):
            os.makedirs(os.path.dirname(os.path.join(dest, f)), exist_ok=True)
            shutil.copy2(src, os.path.join(dest, f))


def failing_tests(output):
    """The tests CTest lists as failed ("  12 - name (Failed)"), crashed ("(SEGFAULT)",
    "(Subprocess aborted)": a crash is a test failing too) or timed out; not those it could not
    run ("(Not Run)": no executable)."""
    listed = output.split("The following tests FAILED:", 1)[1] if "FAILED:" in output else ""
    return [line.split(" - ", 1)[1].rsplit(" (", 1)[0].strip() for line in listed.splitlines()
            if " - " in line and line.rstrip().endswith(")") and "(Not Run)" not in line]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", default="/tmp/cmrscl-mutate")
    ap.add_argument("--device", default=os.environ.get("CMRSCL_DEVICE", ""))
    ap.add_argument("--only", default="", help="comma-separated mutation names (substrings)")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args()
    chosen = [m for m in MUTATIONS
              if not args.only or any(o in m.name for o in args.only.split(","))]
    if args.list:
        for m in chosen:
            print(f"{m.name}: {m.path}; ctest -R '{m.ctest}'; python {m.python or '-'}")
        return 0
    src, build = os.path.join(args.work, "src"), os.path.join(args.work, "build")
    shutil.rmtree(src, ignore_errors=True)
    copy_tree(src)
    log = os.path.join(args.work, "mutate.log")
    env = dict(os.environ)
    if args.device:
        env["CMRSCL_DEVICE"] = args.device
    env.update(CMRSCL_LIBRARY=os.path.join(build, "libcmrscl.so.0"),
               PYTHONPATH=os.path.join(src, "python", "src"))
    for step in (["cmake", "-S", src, "-B", build, "-DCMAKE_BUILD_TYPE=Release"],
                 ["cmake", "--build", build, "-j", str(os.cpu_count() or 2)]):
        status, out = run(step, log=log)
        if status:
            print(out[-3000:])
            return 2
    rows, bad = [], 0
    for m in chosen:
        path = os.path.join(src, m.path)
        text = open(path, encoding="utf-8").read()
        if text.count(m.old) != 1:
            rows.append((m.name, "DOES NOT APPLY", f"{text.count(m.old)} matches", ""))
            bad += 1
            continue
        t0 = time.time()
        try:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text.replace(m.old, m.new))
            status, out = run(["cmake", "--build", build, "-j", str(os.cpu_count() or 2)],
                              log=log)
            if status:
                rows.append((m.name, "BUILD FAILED", "", ""))
                bad += 1
                continue
            _, out = run(["ctest", "--test-dir", build, "-R", m.ctest, "-j",
                          str(os.cpu_count() or 2)], env=env, log=log)
            c_failed = failing_tests(out)
            py = "-"
            if m.python:
                status, out = run([sys.executable, "-m", "pytest", "-x", "-q", "-p",
                                   "no:cacheprovider", m.python], cwd=src, env=env, log=log)
                py = "failed (caught)" if status else "PASSED"
            caught = bool(c_failed) and py != "PASSED"
            bad += not caught
            rows.append((m.name, "caught" if caught else "SURVIVED",
                         " ".join(c_failed) or "none failed", py))
        finally:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        print(f"{m.name}: {rows[-1][1]} ({time.time() - t0:.0f} s)", flush=True)
    run(["cmake", "--build", build, "-j", str(os.cpu_count() or 2)], log=log)
    print("\n| mutation | result | CTest tests that failed | Python |\n|---|---|---|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} |")
    print(f"\n(log: {log})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
