"""`ClusterSetup`, `Capacity` and `Team`: the Kueue admin objects a platform team creates once."""
