"""What a run will do, decided at submit: `LocalOptions`, the environment contract of each
process, the volume folders, and the `LaunchPlan` the supervisor follows. Its supervisor imports
the light modules of this room only (the plan and the contract), never the options or the job."""
