"""What each `ServeModel` field means: the `Attributes:` section of its docstring, which
`help(ServeModel)` and the API reference show (kept here so serving/model.py stays one job)."""

ATTRIBUTES = """
    Attributes:
        name: The server's name (a DNS label); its Service and Deployment carry it.
        model: Hugging Face repo id (or catalog name) of the model to serve.
        accelerator: The GPU model; its `count` (or `machine_type`) bounds one node's GPUs, and
            the default `count=1` means any machine of that GPU.
        engine: Serving engine: "vllm", "tgi" or "triton".
        tensor_parallel: GPUs a replica splits each layer over; "auto" sizes it from memory.
        pipeline_parallel: Pipeline stages (nodes) of a replica; "auto" uses one node if it can.
        max_model_len: Longest sequence in tokens; None: the model's context, at most 8192.
        concurrency: Full-length sequences the KV cache must hold; None means 2.
        dtype: Weight and activation type: "bfloat16", "float16" or "float32".
        quantization: Weight quantization the engine applies (e.g. "awq", "fp8"); None: none.
        kv_cache_dtype: KV cache type: "auto" (the model's dtype) or "fp8".
        gpu_memory_utilization: Share of each GPU's memory the engine may use (0-1].
        model_size: Size facts for a model the catalog lacks: `ModelSize(...)` or a catalog name.
        served_model_name: The name clients request; None: the model id.
        prefix_caching: Reuse the KV cache of shared prompt prefixes (vLLM).
        max_batch_size: Sequences batched at once (vLLM --max-num-seqs); None means 256.
        lora_adapters: LoRA adapters to load: name -> repo id or path.
        max_lora_rank: Largest LoRA rank the engine reserves memory for.
        replicas: Fixed replica count (0 stops the service), or `Autoscaling(...)`.
        hf_token_secret: Kubernetes Secret holding the Hugging Face token (gated models).
        hf_token_key: Key of the token inside `hf_token_secret`.
        image: Server image; None: the engine's pinned image.
        model_repository: Triton's model repository: gs://BUCKET/PATH, pvc://CLAIM/PATH or a path.
        weights: A volume holding the model's files, instead of downloading from the Hub.
        extra_args: Extra command-line arguments passed to the engine.
        env: Environment variables of the server container.
        secret_env: Variables read from Kubernetes Secrets: name -> SecretRef or "SECRET/KEY".
        not_secret: Variable names in `env` that only look secret, allowed in plain text.
        max_gpus: Refuse plans whose replica needs more GPUs than this.
        rollout: How `update()` moves to a new version: `Rollout(...)` (surge or canary).
        namespace: Kubernetes namespace of the server.
        queue: Kueue LocalQueue that admits the replicas; None: not managed by Kueue.
        priority_class: Kubernetes PriorityClass of the pods.
        service_account: Kubernetes service account of the pods.
        spot: Run replicas on Spot VMs, or `SpotMix(...)`: an on-demand floor plus Spot.
        routing: Traffic split and gateway routes: `Routing(...)`; None: one Service only.
        labels: Labels added to the server's objects and pods.
        startup_timeout_seconds: Time a replica gets to load; None: derived from weight size.
        longest_request_seconds: Longest request in flight; drives the graceful drain.
        network: Multi-node replicas' networking: "auto" takes the machine's GPUDirect stack.
"""
