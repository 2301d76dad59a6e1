"""ServeModel -> Deployment or LeaderWorkerSet, Service, autoscaling, monitoring and routing."""
