"""Data volumes and checkpoint storage: models, rules, pod volumes and the objects they need."""
