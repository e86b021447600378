/* rs_defaults.h — every component parameter's default, once: the text a scenario writes (the scenario schema's defaults and `ringsim params` print it) and, where the model builds without a scenario, the value in SI. Plain C. */
#ifndef RS_DEFAULTS_H
#define RS_DEFAULTS_H

/*
 * What a scenario gets when it leaves a key out is what `ringsim params` says it gets: both read
 * these. The texts are the truth (scenarios/README.md documents them; the scenario loader parses
 * them with its unit parser); the numbers beside some are the same values for the model's own
 * builders (Link::defaults(), Switch::defaults(), the RTL clock), and tests/sim/scenario/test_defaults
 * checks that each number is what its text parses to.
 *
 * Figures: 30 GB/s is the raw HCCS per-link figure that circulates (unconfirmed), 100 Gb/s a
 * 100GE RoCE NIC; latencies, packet and buffer sizes and device figures are stated assumptions
 * (scenarios/README.md, "Link figures").
 */

/* topology.link: every NPU-NPU link, and the NPU-switch links of switch and fat_tree */
#define RS_DEFAULT_LINK_BANDWIDTH "30 GB/s"
#define RS_DEFAULT_LINK_BANDWIDTH_BPS 30e9
#define RS_DEFAULT_LINK_LATENCY "1.5 us"
#define RS_DEFAULT_LINK_LATENCY_S 1.5e-6
#define RS_DEFAULT_LINK_PACKET "4 KiB"
#define RS_DEFAULT_LINK_PACKET_BYTES 4096u
#define RS_DEFAULT_LINK_HEADER "64 B"
#define RS_DEFAULT_LINK_HEADER_BYTES 64u
#define RS_DEFAULT_LINK_BUFFER "256 KiB"
#define RS_DEFAULT_LINK_BUFFER_BYTES 262144u

/* topology.nic: cluster, each NPU's NIC link to the switch */
#define RS_DEFAULT_NIC_BANDWIDTH "100 Gb/s"
#define RS_DEFAULT_NIC_BANDWIDTH_BPS 12.5e9
#define RS_DEFAULT_NIC_LATENCY "2 us"
#define RS_DEFAULT_NIC_LATENCY_S 2e-6
#define RS_DEFAULT_NIC_PACKET "4 KiB"
#define RS_DEFAULT_NIC_PACKET_BYTES 4096u
#define RS_DEFAULT_NIC_HEADER "64 B"
#define RS_DEFAULT_NIC_HEADER_BYTES 64u
#define RS_DEFAULT_NIC_BUFFER "256 KiB"
#define RS_DEFAULT_NIC_BUFFER_BYTES 262144u

/* topology.switch */
#define RS_DEFAULT_SWITCH_LATENCY "500 ns"
#define RS_DEFAULT_SWITCH_LATENCY_S 500e-9
#define RS_DEFAULT_SWITCH_BUFFER "1 MiB"
#define RS_DEFAULT_SWITCH_BUFFER_BYTES 1048576u

/* device: the NPU */
#define RS_DEFAULT_NPU_DMA_ENGINES "4"
#define RS_DEFAULT_NPU_QUEUE_DEPTH "16"
#define RS_DEFAULT_NPU_MEMORY_BANDWIDTH "400 GB/s"
#define RS_DEFAULT_NPU_REDUCE_BANDWIDTH "200 GB/s"
#define RS_DEFAULT_NPU_TASK_OVERHEAD "1 us"
#define RS_DEFAULT_NPU_MEMORY "1 GiB"
#define RS_DEFAULT_NPU_INLINE_REDUCE "all"
#define RS_DEFAULT_NPU_INLINE_ALIGN "1 B"
/* NCL_BUF_SCRATCH per device: staged reductions and reduce-scatter's rounds land there */
#define RS_DEFAULT_NPU_SCRATCH "memory/4" /* at most RS_DEFAULT_NPU_SCRATCH_MAX_BYTES */
#define RS_DEFAULT_NPU_SCRATCH_MAX_BYTES (16u << 20)

/* device: the RTL devices of fidelity rtl */
#define RS_DEFAULT_RTL_FIDELITY "systemc"
#define RS_DEFAULT_RTL_CLOCK "1 GHz"
#define RS_DEFAULT_RTL_CLOCK_HZ 1e9
#define RS_DEFAULT_RTL_RANKS "all"

/* workload: the engine's configuration on the simulated machine */
#define RS_DEFAULT_ENGINE_SLICE "4 MiB"
#define RS_DEFAULT_ENGINE_SLICE_BYTES (4u << 20)

/* fidelity: the network's */
#define RS_DEFAULT_NETWORK_FIDELITY "message"

#endif
