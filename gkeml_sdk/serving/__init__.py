"""`ServeModel`: engine and model rows, sizing, routing, and the objects a model server
compiles to."""
