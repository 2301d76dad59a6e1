"""Pure interpretation of Kueue, Job/JobSet and Pod objects into an `Explanation` or a
`Preview` (no I/O: the backends read the objects and pass them in)."""
