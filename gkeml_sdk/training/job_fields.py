"""What each `TrainingJob` field means: the `Attributes:` section of its docstring, which
`help(TrainingJob)` and the API reference show (kept here so training/model.py stays one job)."""

ATTRIBUTES = """
    Attributes:
        name: The run's name (a DNS label); the Job or JobSet and its pods carry it.
        image: Container image of every process; None runs the command locally only.
        command: The command each process runs, as a list of words.
        args: Extra arguments appended to `command`.
        env: Environment variables of every process.
        secret_env: Variables read from Kubernetes Secrets: name -> SecretRef or "SECRET/KEY".
        accelerator: The hardware of each node: `Accelerator(...)`, `TpuSlice(...)` or None.
        nodes: Nodes (pods) of the job; 0 derives it (the TPU slice's hosts, else 1).
        procs_per_node: Processes per node; 0 derives it (one per whole GPU, else 1).
        gang: Start all pods together or none; None derives it (True for several pods).
        spot: Run on Spot VMs (cheaper, preemptible; preemptions are not counted as failures).
        provisioning: How nodes are obtained: "standard", "flex-start" or "queued" (DWS).
        capacity: Several modes in preference order for an ordered queue; Kueue admits to the
            first with room and the pods carry no selector pinning one.
        reservation: A specific Compute Engine reservation the nodes must come from.
        reservation_project: The project owning a shared reservation (None: this one).
        multikueue: The queue dispatches to MultiKueue workers (sets spec.managedBy).
        placement: Where pods land: "compact" or `TopologyPlacement(level=..., mode=...)`.
        queue: The Kueue LocalQueue the job is submitted to.
        priority: A WorkloadPriorityClass name; None keeps the queue's default.
        max_restarts: Restarts allowed for failures of user code (infrastructure loss is free).
        namespace: Kubernetes namespace of the job.
        labels: Labels added to the job's objects and pods.
        annotations: Annotations added to the job's objects and pods.
        max_runtime: Longest the job may run, in seconds (or "90m", "2h", "1d12h").
        checkpoint_dir: Durable checkpoint location (gs://BUCKET/PATH) that survives restarts.
        stateless: The job keeps no state, so it may lose pods without durable checkpoints.
        volumes: Data mounted into every pod (GcsFuse, Parallelstore, HyperdiskML, Pvc).
        service_account: Kubernetes service account of the pods (Workload Identity).
        cpu: CPU request of each pod (a Kubernetes quantity); None derives it from the machine.
        memory: Memory request of each pod (a Kubernetes quantity); None derives it.
        termination_grace_seconds: Seconds a pod gets to checkpoint after SIGTERM.
        files: Code that travels with the job: relative path -> text, mounted as the workdir.
        network: Inter-node networking: "auto" takes the machine's GPUDirect/Fast Socket stack.
"""
