"""Serve Llama 3.1 70B with vLLM on H100s, sized automatically and autoscaled on queue depth.

    python examples/serve_vllm.py          # print the plan and the manifests; applies nothing
    gkeml render examples/serve_vllm.py    # the same manifests, from the CLI

The plan picks 4 x H100 per replica (TP4): 141 GB of bf16 weights do not fit 2 GPUs' usable
72 GB each. The HPA adds replicas when more than 5 requests wait per replica. The Hub token
comes from the Secret `hf-token` (key `hf_api_token`), created once with
`kubectl create secret generic hf-token --from-literal=hf_api_token=hf_...`.
"""

from __future__ import annotations

from gkeml_sdk import Accelerator, Autoscaling, ServeModel

svc = ServeModel(
    name="chat",
    engine="vllm",
    model="meta-llama/Llama-3.1-70B-Instruct",
    accelerator=Accelerator("h100"),
    tensor_parallel="auto",
    max_model_len=8192,
    replicas=Autoscaling(min=1, max=4, queue_depth=5),
    hf_token_secret="hf-token",
)


if __name__ == "__main__":
    print(svc.plan())
    manifests = svc.compile()
    for note in manifests.notes:
        print(f"note: {note}")
    print()
    print(manifests.to_yaml())
