/* dp_shard.c — dataset sharding as the seeds define it: element i goes to rank i mod size. */
#include "dp/dp.h"

size_t dp_shard_count(size_t n, int size, int rank)
{
    if (size <= 0 || rank < 0 || rank >= size || (size_t)rank >= n)
        return 0;
    /* ceil((n - rank) / size): the first n mod size ranks get one more element. */
    return (n - (size_t)rank + (size_t)size - 1) / (size_t)size;
}

size_t dp_shard_index(size_t j, int size, int rank)
{
    return (size_t)rank + j * (size_t)size;
}

size_t dp_shard_indices(size_t n, int size, int rank, size_t *out, size_t cap)
{
    size_t count = dp_shard_count(n, size, rank);
    for (size_t j = 0; j < count && j < cap && out; j++)
        out[j] = dp_shard_index(j, size, rank);
    return count;
}
