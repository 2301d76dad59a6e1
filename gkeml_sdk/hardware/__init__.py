"""GPUs and TPUs: catalog rows, `Accelerator` and `TpuSlice`, the `Hardware` protocol, MIG and
sharing, DRA, inter-node network stacks and node pool shapes."""
