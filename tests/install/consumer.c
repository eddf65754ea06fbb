/* consumer.c - a program outside the project using the installed libcmrscl: the header
 * and library are found through the CMake package and through pkg-config. */
#include <cmrscl.h>
#include <stdio.h>

int main(void)
{
    int64_t row_ptr[] = {0, 1, 2};
    int32_t col[] = {1, 0};
    double val[] = {2.0, 3.0};
    cmrscl_csr a = {2, 2, 2, row_ptr, col, val};
    cmrscl_cmrs c;
    if (cmrscl_cmrs_from_csr(&a, 2, 0, &c) != CMRSCL_OK)
        return 1;
    int ok =
        c.strips == 1 && c.strip_ptr[1] == 2 && cmrscl_version_number() == CMRSCL_VERSION_NUMBER;
    cmrscl_cmrs_free(&c);
    printf("consumer: cmrscl %s, %s\n", cmrscl_version_string(), ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}
