"""Why a run is where it is, read from the cluster: its objects, its queue and who preempted
it."""
