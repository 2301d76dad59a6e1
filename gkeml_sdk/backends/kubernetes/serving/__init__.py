"""Model servers on the cluster: applying their objects, the serve handle, rollouts and the
engines' metrics."""
