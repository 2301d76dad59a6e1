"""Model servers on a cluster: the handle that applies, follows and scales them."""
