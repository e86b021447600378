/* rs_layers.h — a model table's repeated layers (tensors named PREFIX.N.*), which pipeline stages split and tensor parallelism shards. */
#ifndef RS_LAYERS_H
#define RS_LAYERS_H

#include <stddef.h>

#include "model/rs_spec.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Layer k is tensors first[k] .. first[k + 1] - 1 (the last: up to `after` - 1); tensors before
 *  first[0] (embeddings) go with the first stage, those from `after` on (a head) with the last. */
typedef struct rs_layers {
    size_t count;
    size_t *first; /**< count + 1 entries: first[count] == after */
    size_t after;
} rs_layers;

/**
 * The layers of t: the tensors whose name has a purely numeric dotted part (h.7.attn.c_proj.weight:
 * PREFIX "h", N 7), with the prefix of the first such tensor, numbered 0, 1, ... in order and
 * contiguous. 0, or -1 with why (no such tensors, a layer out of order, a layer's tensors apart).
 */
int rs_layers_find(const rs_training *t, rs_layers *out, char *why, size_t whylen);
void rs_layers_free(rs_layers *l);

/** Within layer k, the end of its attention block: the tensor after the last one whose name
 *  says attn or attention (Megatron's first tensor-parallel allreduce comes after it), or the
 *  middle of the layer's tensors when none does. */
size_t rs_layers_split(const rs_training *t, const rs_layers *l, size_t k);

#ifdef __cplusplus
}
#endif
#endif
