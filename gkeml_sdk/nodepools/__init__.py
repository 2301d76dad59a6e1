"""`NodePool`: a GKE node pool request derived from an `Accelerator` or `TpuSlice`, its rules,
pool files and the GKE API JSON it compiles to (`manifests`)."""
