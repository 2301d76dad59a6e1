"""`NodePool`: a GKE node pool request derived from an `Accelerator` or `TpuSlice`, its rules
and pool files."""
