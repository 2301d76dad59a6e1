"""Kueue, JobSet and Job labels, annotations and reasons the compiler writes and the backends read
(https://kueue.sigs.k8s.io/docs/, https://jobset.sigs.k8s.io/docs/)."""

from __future__ import annotations

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
MAX_EXEC_TIME_LABEL = "kueue.x-k8s.io/max-exec-time-seconds"
JOB_UID_LABEL = "kueue.x-k8s.io/job-uid"
DEFAULT_LOCAL_QUEUE = "default"
# MultiKueue's controller: the AdmissionCheck controllerName, and the managedBy value of jobs
# a manager dispatches (the JobSet and Job controllers leave such jobs to it).
MULTIKUEUE_CONTROLLER = "kueue.x-k8s.io/multikueue"
# The WorkloadPriorityClasses a ClusterSetup creates unless it names its own: jobs can say
# priority="low" / "normal" / "high" on a fresh setup, and tiers preempt downwards.
DEFAULT_PRIORITIES = {"low": 100, "normal": 500, "high": 1000}

JOBSET_NAME_LABEL = "jobset.sigs.k8s.io/jobset-name"
JOBSET_UID_LABEL = "jobset.sigs.k8s.io/jobset-uid"
JOBSET_RESTART_ATTEMPT_LABEL = "jobset.sigs.k8s.io/restart-attempt"
JOBSET_JOB_INDEX_LABEL = "jobset.sigs.k8s.io/job-index"
JOBSET_REPLICAS_LABEL = "jobset.sigs.k8s.io/replicatedjob-replicas"
JOBSET_EXCLUSIVE_TOPOLOGY = "alpha.jobset.sigs.k8s.io/exclusive-topology"

JOB_COMPLETION_INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"
JOB_INDEX_FAILURE_COUNT_ANNOTATION = "batch.kubernetes.io/job-index-failure-count"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
JOB_CONTROLLER_UID_LABEL = "batch.kubernetes.io/controller-uid"

DISRUPTION_CONDITION = "DisruptionTarget"
# JobSet failure-policy rule matching a Job failed by its podFailurePolicy: user code exited
# non-zero. Disruptions never fail a Job (the podFailurePolicy ignores them), so the other
# reasons are pods that failed without a trainer exit code.
USER_CODE_JOB_FAILURE_REASONS = ("PodFailurePolicy",)
OTHER_JOB_FAILURE_REASONS = ("BackoffLimitExceeded", "DeadlineExceeded")
