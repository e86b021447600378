# sources.cmake — the engine's source files, one list for every build of it: the host build here
# (firmware/CMakeLists.txt) and the freestanding cross-builds (firmware/port/CMakeLists.txt).
# Paths are relative to firmware/.
set(NCL_CORE_SOURCES
  src/ncl_api.c
  src/ncl_names.c
  src/ncl_launch.c
  src/ncl_comm.c
  src/ncl_exec.c
  src/ncl_plan.c
  src/ncl_part.c
  src/ncl_pipeline.c
  src/ncl_task.c
  src/ncl_fmt.c
  src/ncl_dtype.c
  src/ncl_diag.c
  src/algo/ring_allreduce.c
  src/algo/ring_reduce_scatter.c
  src/algo/ring_allgather.c
  src/algo/chain_broadcast.c
  src/algo/tree_broadcast.c
  src/algo/ring_reduce.c
  src/algo/tree_reduce.c
  src/algo/hd_allreduce.c
  src/algo/hd_reduce_scatter.c
  src/algo/hd_allgather.c
  src/algo/mesh_allreduce.c
  src/algo/mesh_reduce_scatter.c
  src/algo/mesh_allgather.c
  src/algo/sag_broadcast.c
  src/algo/dbtree_allreduce.c
  src/algo/det_allreduce.c
  src/algo/hier_allreduce.c
  src/algo/hier_broadcast.c
  src/algo/user_schedule.c
)
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
