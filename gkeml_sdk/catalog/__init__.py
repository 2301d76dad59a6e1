"""Facts about GKE hardware, Kueue and prices, as data. Imports nothing else of ours."""
