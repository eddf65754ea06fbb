/* inputs.h - the matrices a bench command runs over: the command line's FILEs and --gen
 * SPECs, then the entries of its --suite files (suite.h), else the default matrix. */
#ifndef CMRSCL_TOOLS_INPUTS_H
#define CMRSCL_TOOLS_INPUTS_H

#include "cli.h"

typedef struct input_list {
    char **text;
    bool *is_gen;
    int n;
} input_list;

/* Fills *l (zeroed first) from the options; 0, or an exit status having printed why. */
int inputs_collect(const cli_options *opt, input_list *l);
void inputs_free(input_list *l);

#endif
