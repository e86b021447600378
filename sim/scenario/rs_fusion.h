/* rs_fusion.h — a training workload's gradient fusion strategy: its text form, planned into buckets by dp. */
#ifndef RS_FUSION_H
#define RS_FUSION_H

#include <stddef.h>
#include <stdint.h>

#include <dp/dp.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The scenario key workload.training.fusion in text; the buckets come from the data-parallel
 * layer's planner (dp_fusion_plan), so a what-if and a real training run fuse alike. Gradients
 * are numbered as back-propagation produces them (dp.h): index 0 is the output layer's, the
 * first ready; a model table lists tensors in forward order, so gradient i is its tensor n-1-i.
 *   default               = sizes: 96.54, 3.46 (the seeds' default split)
 *   sizes: P1, P2, ...    percentages of the gradient bytes, summing to 100, at most 8
 *   indices: I1, I2, ...  ascending end indices (inclusive), at most 8 segments
 *   threshold: SIZE       a gradient joins the open bucket while it stays within SIZE, e.g. 64 MiB
 *   single                everything in one bucket (nothing overlaps back-propagation)
 *   none                  one allreduce per gradient (no fusion)
 */

#define RS_FUSION_MAX_VALUES 16 /* room to parse; dp allows 8 segments and says so */

typedef struct rs_fusion {
    dp_fusion dp; /* points into the arrays below */
    double percent[RS_FUSION_MAX_VALUES];
    uint32_t index[RS_FUSION_MAX_VALUES];
    char text[160]; /* as written back: "sizes: 96.54, 3.46" */
} rs_fusion;

/** Parses the text (NULL: default). 0, or -1 with one line in err (what is wrong, what is
 *  allowed). The strategy's rules (sums, order, segment count) are dp_fusion_plan's. */
int rs_fusion_parse(const char *text, rs_fusion *out, char *err, size_t errlen);

/** Plans n gradients (bytes[i] for gradient i, in produced order) into out (room for n).
 *  Returns the bucket count, or 0 with dp's message in err. */
uint32_t rs_fusion_buckets(const rs_fusion *f, const uint64_t *bytes, uint32_t n, dp_bucket *out, char *err,
                           size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
