/* gen_elastic.c - elastic:N, 3-D linear elasticity: an isotropic solid (Young's modulus 1,
 * Poisson's ratio 0.3) on a cube of N^3 unit hexahedra with trilinear elements, three unknowns
 * (x, y, z displacement) at each of the (N + 1)^3 points, consecutive; the points of the face
 * x = 0 clamped (their rows and columns the identity). SPD, rows of up to 81 entries, and the
 * operator whose near-null space is the rigid-body modes (cmrscl_rigid_body_modes): what
 * smoothed aggregation needs six candidates for. Point (x, y, z) is number x + (N + 1)(y + (N
 * + 1) z). */
#include "io/io.h"

#include <math.h>
#include <string.h>

/* The unit cube's element stiffness, 2 x 2 x 2 Gauss points; corner a = ax + 2 ay + 4 az,
 * unknown 3 a + component. Made exactly symmetric (the two orders of its sums averaged). */
static void element_stiffness(double k[24][24])
{
    const double nu = 0.3, lambda = nu / ((1 + nu) * (1 - 2 * nu)), mu = 1 / (2 * (1 + nu));
    const double d[6][6] = {{lambda + 2 * mu, lambda, lambda, 0, 0, 0},
                            {lambda, lambda + 2 * mu, lambda, 0, 0, 0},
                            {lambda, lambda, lambda + 2 * mu, 0, 0, 0},
                            {0, 0, 0, mu, 0, 0},
                            {0, 0, 0, 0, mu, 0},
                            {0, 0, 0, 0, 0, mu}};
    const double g[2] = {0.5 - 0.5 / sqrt(3.0), 0.5 + 0.5 / sqrt(3.0)};
    memset(k, 0, sizeof(double) * 24 * 24);
    for (int gp = 0; gp < 8; ++gp) {
        double p[3] = {g[gp & 1], g[gp >> 1 & 1], g[gp >> 2 & 1]}, b[6][24] = {{0}};
        for (int a = 0; a < 8; ++a) {
            int c[3] = {a & 1, a >> 1 & 1, a >> 2 & 1};
            double f[3], dn[3];
            for (int x = 0; x < 3; ++x)
                f[x] = c[x] ? p[x] : 1 - p[x];
            for (int x = 0; x < 3; ++x)
                dn[x] = (c[x] ? 1.0 : -1.0) * f[(x + 1) % 3] * f[(x + 2) % 3];
            /* strains xx, yy, zz, then the shears xy, yz, xz */
            size_t u = 3 * (size_t)a; /* the corner's x unknown */
            b[0][u] = dn[0], b[1][u + 1] = dn[1], b[2][u + 2] = dn[2];
            b[3][u] = dn[1], b[3][u + 1] = dn[0];
            b[4][u + 1] = dn[2], b[4][u + 2] = dn[1];
            b[5][u] = dn[2], b[5][u + 2] = dn[0];
        }
        for (int i = 0; i < 24; ++i)
            for (int j = 0; j < 24; ++j) {
                double s = 0;
                for (int r = 0; r < 6; ++r)
                    for (int q = 0; q < 6; ++q)
                        s += b[r][i] * d[r][q] * b[q][j];
                k[i][j] += s / 8;
            }
    }
    for (int i = 0; i < 24; ++i)
        for (int j = 0; j < i; ++j)
            k[i][j] = k[j][i] = (k[i][j] + k[j][i]) / 2;
}

void cmrs_gen_elastic_init(int64_t n, cmrs_elastic *e)
{
    e->n = n;
    element_stiffness(e->k);
}

int64_t cmrs_gen_elastic_row(const void *shape, int64_t i, int32_t *cols, double *vals)
{
    const cmrs_elastic *e = shape;
    int64_t m = e->n + 1, node = i / 3, comp = i % 3;
    int64_t p[3] = {node % m, node / m % m, node / (m * m)};
    if (p[0] == 0) { /* clamped */
        cols[0] = (int32_t)i, vals[0] = 1;
        return 1;
    }
    int64_t len = 0;
    for (int dz = -1; dz <= 1; ++dz)
        for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx) {
                int64_t q[3] = {p[0] + dx, p[1] + dy, p[2] + dz}, delta[3] = {dx, dy, dz};
                if (q[0] < 1 || q[0] >= m || q[1] < 0 || q[1] >= m || q[2] < 0 || q[2] >= m)
                    continue; /* outside, or clamped: no coupling */
                double sum[3] = {0, 0, 0};
                /* the elements holding both points: corner e = max(p, q) - 1 or p per axis */
                int64_t lo[3], hi[3];
                for (int x = 0; x < 3; ++x) {
                    lo[x] = (delta[x] > 0 ? q[x] : p[x]) - 1, hi[x] = delta[x] < 0 ? q[x] : p[x];
                    lo[x] = lo[x] < 0 ? 0 : lo[x], hi[x] = hi[x] > e->n - 1 ? e->n - 1 : hi[x];
                }
                for (int64_t ez = lo[2]; ez <= hi[2]; ++ez)
                    for (int64_t ey = lo[1]; ey <= hi[1]; ++ey)
                        for (int64_t ex = lo[0]; ex <= hi[0]; ++ex) {
                            int a = (int)((p[0] - ex) + 2 * (p[1] - ey) + 4 * (p[2] - ez));
                            int b = (int)((q[0] - ex) + 2 * (q[1] - ey) + 4 * (q[2] - ez));
                            for (int c = 0; c < 3; ++c)
                                sum[c] += e->k[3 * (int64_t)a + comp][3 * (int64_t)b + c];
                        }
                int64_t other = q[0] + m * (q[1] + m * q[2]);
                for (int c = 0; c < 3; ++c)
                    if (fabs(sum[c]) > 1e-12) { /* couplings the element's symmetry zeroes */
                        cols[len] = (int32_t)(3 * other + c);
                        vals[len++] = sum[c];
                    }
            }
    return len;
}
