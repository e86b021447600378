/* rs_layers.c — a model table's repeated layers from its tensor names. */
#include "rs_layers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first dotted part of name made of digits only: its number in *n and the length of the
 * prefix before it (without the dot) in *plen. 0 when there is none. */
static int layer_part(const char *name, long *n, size_t *plen)
{
    const char *p = name;
    while (*p) {
        const char *end = strchr(p, '.');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        size_t digits = 0;
        while (digits < len && p[digits] >= '0' && p[digits] <= '9')
            digits++;
        if (len > 0 && digits == len && p > name && len < 10) {
            *n = strtol(p, NULL, 10);
            *plen = (size_t)(p - name) - 1;
            return 1;
        }
        if (!end)
            break;
        p = end + 1;
    }
    return 0;
}

int rs_layers_find(const rs_training *t, rs_layers *out, char *why, size_t whylen)
{
    memset(out, 0, sizeof *out);
    const char *prefix = NULL;
    size_t plen0 = 0;
    long expect = 0;
    size_t last_layer_tensor = 0;
    out->first = malloc((t->tensors_count + 1) * sizeof *out->first);
    if (!out->first) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < t->tensors_count; i++) {
        const char *name = t->tensors[i].name;
        long n;
        size_t plen;
        if (!layer_part(name, &n, &plen) || (prefix && (plen != plen0 || strncmp(name, prefix, plen) != 0)))
            continue;
        if (!prefix)
            prefix = name, plen0 = plen;
        if (n == expect) { /* a new layer */
            if (out->count > 0 && last_layer_tensor + 1 != i) {
                snprintf(why, whylen, "tensor %s starts layer %ld, but a tensor of no layer comes before it "
                         "(allowed: each layer's tensors together)", name, n);
                rs_layers_free(out);
                return -1;
            }
            out->first[out->count++] = i;
            expect++;
        } else if (n != expect - 1 || last_layer_tensor + 1 != i) {
            snprintf(why, whylen, "tensor %s is of layer %ld after layer %ld (allowed: layers 0, 1, ... in order, "
                     "each layer's tensors together)", name, n, expect - 1);
            rs_layers_free(out);
            return -1;
        }
        last_layer_tensor = i;
    }
    if (out->count == 0) {
        snprintf(why, whylen, "no tensor is named PREFIX.N.* (allowed: a table of layers, e.g. h.0.attn.c_attn.weight)");
        rs_layers_free(out);
        return -1;
    }
    out->after = last_layer_tensor + 1;
    out->first[out->count] = out->after;
    return 0;
}

void rs_layers_free(rs_layers *l)
{
    free(l->first);
    memset(l, 0, sizeof *l);
}

size_t rs_layers_split(const rs_training *t, const rs_layers *l, size_t k)
{
    size_t a = l->first[k], b = l->first[k + 1], split = 0;
    for (size_t i = a; i < b; i++)
        if (strstr(t->tensors[i].name, "attn") || strstr(t->tensors[i].name, "attention"))
            split = i + 1;
    return split ? split : a + (b - a) / 2;
}
