"""GKE's API through `google-cloud-container`: `GkeClient` creates, resizes and deletes node
pools. The client library is imported only when a client is made or a pool compiled."""
