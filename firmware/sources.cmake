# sources.cmake — the engine's source files, one list for every build of it: the host build here
# (firmware/CMakeLists.txt) and the freestanding cross-builds (firmware/port/CMakeLists.txt).
# Paths are relative to firmware/.
set(NCL_CORE_SOURCES
  src/ncl_api.c
  src/ncl_names.c
  src/ncl_launch.c
  src/ncl_comm.c
  src/ncl_split.c
  src/ncl_exec.c
  src/ncl_plan.c
  src/ncl_part.c
  src/ncl_pipeline.c
  src/ncl_task.c
  src/ncl_fmt.c
  src/ncl_dtype.c
  src/ncl_diag.c
)

# The algorithms by family (the ncl_algo values). Every host build takes all of them; a board can
# build a subset (firmware/port's NCL_PORT_ALGOS), and the registry in ncl_plan.c then leaves out
# each family built without (NCL_NO_ALGO_<FAMILY>): auto chooses among the rest, and a forced
# algorithm that is not there is refused as unsupported.
set(NCL_ALGO_FAMILIES ring chain tree hd mesh sag dbtree det hier user pairwise)
set(NCL_ALGO_ring_SOURCES
  src/algo/ring_allreduce.c src/algo/ring_reduce_scatter.c src/algo/ring_allgather.c src/algo/ring_reduce.c)
set(NCL_ALGO_chain_SOURCES src/algo/chain_broadcast.c)
set(NCL_ALGO_tree_SOURCES src/algo/tree_broadcast.c src/algo/tree_reduce.c)
set(NCL_ALGO_hd_SOURCES src/algo/hd_allreduce.c src/algo/hd_reduce_scatter.c src/algo/hd_allgather.c)
set(NCL_ALGO_mesh_SOURCES
  src/algo/mesh_allreduce.c src/algo/mesh_reduce_scatter.c src/algo/mesh_allgather.c src/algo/mesh_alltoall.c)
set(NCL_ALGO_sag_SOURCES src/algo/sag_broadcast.c)
set(NCL_ALGO_dbtree_SOURCES src/algo/dbtree_allreduce.c)
set(NCL_ALGO_det_SOURCES src/algo/det_allreduce.c)
set(NCL_ALGO_hier_SOURCES src/algo/hier_allreduce.c src/algo/hier_broadcast.c)
set(NCL_ALGO_user_SOURCES src/algo/user_schedule.c)
set(NCL_ALGO_pairwise_SOURCES src/algo/pairwise_alltoall.c)
set(NCL_ALGO_SOURCES)
foreach(_family IN LISTS NCL_ALGO_FAMILIES)
  list(APPEND NCL_ALGO_SOURCES ${NCL_ALGO_${_family}_SOURCES})
endforeach()

# The schedule checker: optional on a board (NCL_NO_CHECKER leaves it out; user schedules, which
# must be proven, are then refused).
set(NCL_CHECK_SOURCES
  src/check/ncl_check.c
  src/check/ck_base.c
  src/check/ck_sym.c
  src/check/ck_order.c
  src/check/ck_zone.c
  src/check/ck_run.c
  src/check/ck_verdict.c
)
