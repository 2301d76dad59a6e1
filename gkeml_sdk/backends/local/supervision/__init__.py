"""The detached supervisor of a local run: how it is launched apart from the submitter, how it
starts, restarts and stops the processes, and how their output reaches the logs."""
