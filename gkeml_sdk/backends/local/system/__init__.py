"""What the operating system gives a local run, confined: private files and directories, JSON
read with bounds, process identities and groups, the submission lock. Imports no other room."""
