"""`TrainingJob`: the model, its rules, the code it ships, the environment contract and the
Job/JobSet it compiles to."""
