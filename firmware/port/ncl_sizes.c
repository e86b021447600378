/* ncl_sizes.c — the engine's structures as this target lays them out, for port_build.sh's memory
 * line (it reads the arrays' sizes with nm -S; no image links this). */
#include "ncl_comm.h"

const char ncl_size_comm[sizeof(ncl_comm)] = {0};
const char ncl_size_cost[sizeof(ncl_cost)] = {0};
