"""The run controller: one owner of each run's lifecycle (its record, its status tracker and
its recovery decision), run by `gkeml controller run` in the cluster or, with no controller
alive, by the client that follows the run."""
