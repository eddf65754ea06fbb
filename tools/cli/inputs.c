/* inputs.c - the list of matrices of a bench command (inputs.h). */
#include "inputs.h"
#include "suite.h"

#include <stdlib.h>
#include <string.h>

void inputs_free(input_list *l)
{
    for (int i = 0; i < l->n; ++i)
        free(l->text[i]);
    free(l->text);
    free(l->is_gen);
    memset(l, 0, sizeof *l);
}

static bool inputs_add(input_list *l, const char *text, bool is_gen)
{
    char **t = realloc(l->text, sizeof *t * (size_t)(l->n + 1));
    if (t)
        l->text = t;
    bool *g = t ? realloc(l->is_gen, sizeof *g * (size_t)(l->n + 1)) : NULL;
    if (g)
        l->is_gen = g;
    char *copy = g ? strdup(text) : NULL;
    if (!copy)
        return false;
    l->text[l->n] = copy;
    l->is_gen[l->n++] = is_gen;
    return true;
}

static bool add_suite_entry(void *list, const char *entry, bool is_file)
{
    return inputs_add(list, entry, !is_file);
}

int inputs_collect(const cli_options *opt, input_list *l)
{
    memset(l, 0, sizeof *l);
    int rc = 0;
    for (int i = 0; !rc && i < opt->ninputs; ++i)
        rc = inputs_add(l, opt->inputs[i], opt->is_gen[i]) ? 0 : EXIT_RUN_FAILED;
    for (int i = 0; !rc && i < opt->nsuites; ++i) {
        int got = suite_read(opt->suites[i], add_suite_entry, l);
        if (got < 0)
            fprintf(stderr, "%s: cannot open suite %s\n", cli_name, opt->suites[i]);
        rc = got ? EXIT_RUN_FAILED : 0;
    }
    if (!rc && l->n == 0)
        rc = inputs_add(l, DEFAULT_MATRIX, true) ? 0 : EXIT_RUN_FAILED;
    return rc;
}
