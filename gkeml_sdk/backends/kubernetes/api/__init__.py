"""The cluster's API as every room uses it: the transport, the typed client, watches and
informers, the Lease, and reads and writes of objects several rooms share. Imports no other
room."""
