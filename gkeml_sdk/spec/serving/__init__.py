"""Model serving specs: `ServeModel`, autoscaling, routing, sizing and the serving plan."""
