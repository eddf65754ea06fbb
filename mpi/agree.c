/* agree.c - one outcome for all ranks: a failure on any rank becomes the same failure on
 * every rank (status and message), so that no rank goes on to a collective step that the
 * failing one will never reach. Also the layer's error recording and small helpers (its
 * programs' builds among them). */
#include "dist_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

cmrscl_status cmrs_dist_fail(cmrscl_status status, const char *fmt, ...)
{
    char message[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    return cmrscl_set_error(status, message);
}

cmrscl_status cmrs_dist_fail_mpi(int code, const char *what)
{
    char text[MPI_MAX_ERROR_STRING] = "";
    int length = 0;
    MPI_Error_string(code, text, &length);
    return cmrs_dist_fail(CMRSCL_ERROR_COMMUNICATION, "%s failed: MPI error %d (%s)", what, code,
                          text);
}

cmrscl_status cmrs_dist_agree(MPI_Comm comm, cmrscl_status mine)
{
    int rank = 0, ranks = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &ranks);
    int failing = mine != CMRSCL_OK ? rank : ranks, lowest = ranks;
    int rc = MPI_Allreduce(&failing, &lowest, 1, MPI_INT, MPI_MIN, comm);
    if (rc != MPI_SUCCESS)
        return cmrs_dist_fail_mpi(rc, "MPI_Allreduce (agreeing on the outcome)");
    if (lowest == ranks)
        return CMRSCL_OK;
    /* The lowest failing rank tells everyone what went wrong. */
    struct {
        int status;
        char message[4096];
    } failure = {mine, ""};
    if (rank == lowest)
        snprintf(failure.message, sizeof failure.message, "rank %d: %s", rank, cmrscl_last_error());
    rc = MPI_Bcast(&failure, (int)sizeof failure, MPI_BYTE, lowest, comm);
    if (rc != MPI_SUCCESS)
        return cmrs_dist_fail_mpi(rc, "MPI_Bcast (the failing rank's message)");
    failure.message[sizeof failure.message - 1] = '\0';
    return cmrscl_set_error((cmrscl_status)failure.status, failure.message);
}

cmrscl_status cmrs_dist_same_setting(MPI_Comm comm, int mine, const char *name)
{
    int both[2] = {mine, -mine}, all[2];
    int rc = MPI_Allreduce(both, all, 2, MPI_INT, MPI_MAX, comm);
    if (rc != MPI_SUCCESS)
        return cmrs_dist_fail_mpi(rc, "MPI_Allreduce (a setting)");
    if (all[0] != -all[1]) /* every rank sees the same extremes: the same verdict */
        return cmrs_dist_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                              "%s differs between the ranks: give every rank the same", name);
    return CMRSCL_OK;
}

double cmrs_dist_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

size_t cmrs_dist_value_size(cmrscl_precision p) { return p == CMRSCL_DOUBLE ? 8 : 4; }

/* PoCL 5 fails a build with no diagnostic - "failed to build the program" alone - when
 * processes of one host write its kernel cache at once (pocl/pocl#1480: the ranks of a job
 * on one node), and the same build then passes: a failed build whose log names no error is
 * tried once more, as libcmrscl's own builds do. */
cmrscl_status cmrs_dist_build(cl_context cl, cl_device_id device, const char *name,
                              const char *source, const char *options, cl_program *out)
{
    cl_int err = CL_SUCCESS;
    char log[2048] = "";
    *out = NULL;
    for (int attempt = 0; attempt < 2; ++attempt) {
        *out = clCreateProgramWithSource(cl, 1, &source, NULL, &err);
        if (!*out)
            return cmrs_dist_fail(CMRSCL_ERROR_OPENCL,
                                  "clCreateProgramWithSource (%s): OpenCL "
                                  "error %d",
                                  name, (int)err);
        err = clBuildProgram(*out, 1, &device, options, NULL, NULL);
        if (err == CL_SUCCESS)
            return CMRSCL_OK;
        log[0] = 0;
        clGetProgramBuildInfo(*out, device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        log[sizeof log - 1] = 0;
        bool diagnosed = strstr(log, "error") || strstr(log, "Error") || strstr(log, "ERROR");
        if (err != CL_BUILD_PROGRAM_FAILURE || diagnosed || attempt == 1)
            break;
        clReleaseProgram(*out);
        *out = NULL;
    }
    if (*out)
        clReleaseProgram(*out);
    *out = NULL;
    return cmrs_dist_fail(CMRSCL_ERROR_BUILD, "%s (%s): OpenCL error %d\n%s", name, options,
                          (int)err, log);
}
