"""A local run on disk: the run directory's layout and its state, read and written atomically
by every process (the submitter, the supervisor, any reader), and the files a submit writes."""
