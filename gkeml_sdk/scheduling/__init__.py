"""How capacity is asked for and where pods land: provisioning modes, Spot, Topology-Aware
Scheduling, and the Kueue, JobSet and Job labels."""
