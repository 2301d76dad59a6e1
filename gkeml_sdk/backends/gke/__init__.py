"""GKE's API through `google-cloud-container`: `GkeClient` creates, resizes and deletes node
pools; `messages` turns a `NodePool`'s API JSON into `container_v1` messages. The client
library is imported only when a client is made or messages are asked for."""
