#!/bin/sh
# Writes the samples of `kubectl get job -o json` in this folder from
# ../job.dry-run.json (the Job as sluice would create it) and status blocks
# written by hand from Kubernetes' batch/v1 JobStatus schema, in the shape a
# 1.29 API server returns (see ../README.md: recorded by hand, not from a live
# cluster). Run again after job.yaml changes: sh states/make.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
base="$here/../job.dry-run.json"
uid=3f1c2a9e-5b7d-4c1e-9a64-2f0e8d7b6c15

# what the API server adds to every Job it stores (defaults, labels, selector)
server='
  .metadata += {namespace: "default", uid: $uid, resourceVersion: $rv, generation: 1,
                creationTimestamp: "2026-01-01T00:00:00Z"}
| .metadata.labels += {"batch.kubernetes.io/controller-uid": $uid,
                       "batch.kubernetes.io/job-name": .metadata.name,
                       "controller-uid": $uid, "job-name": .metadata.name}
| .spec += {completionMode: "NonIndexed", completions: 1, parallelism: 1, suspend: false,
            podReplacementPolicy: "TerminatingOrFailed",
            selector: {matchLabels: {"batch.kubernetes.io/controller-uid": $uid}}}
| .spec.template.metadata.creationTimestamp = null
| .spec.template.metadata.labels += {"batch.kubernetes.io/controller-uid": $uid,
                                     "batch.kubernetes.io/job-name": .metadata.name,
                                     "controller-uid": $uid, "job-name": .metadata.name}
| .spec.template.spec += {dnsPolicy: "ClusterFirst", schedulerName: "default-scheduler",
                          securityContext: {}, terminationGracePeriodSeconds: 30}
'

state() { # NAME RESOURCE-VERSION JQ-STATUS-EXPRESSION
	jq --arg uid "$uid" --arg rv "$2" "$server | $3" "$base" >"$here/$1.json"
}

# created, its pod not running yet (pulling the image, or not scheduled)
state active-pending 1001 '.status = {active: 1, ready: 0, startTime: "2026-01-01T00:00:01Z",
	uncountedTerminatedPods: {}}'
# its pod running
state active-running 1002 '.status = {active: 1, ready: 1, startTime: "2026-01-01T00:00:01Z",
	uncountedTerminatedPods: {}}'
# its pod exited 0
state succeeded 1003 '.status = {ready: 0, succeeded: 1, startTime: "2026-01-01T00:00:01Z",
	completionTime: "2026-01-01T00:05:00Z", uncountedTerminatedPods: {},
	conditions: [{type: "Complete", status: "True",
		lastProbeTime: "2026-01-01T00:05:00Z", lastTransitionTime: "2026-01-01T00:05:00Z"}]}'
# a pod failed, retries left (this sample with backoffLimit 2): a new pod runs
state failed-retrying 1004 '.spec.backoffLimit = 2 | .status = {active: 1, ready: 0, failed: 1,
	startTime: "2026-01-01T00:00:01Z", uncountedTerminatedPods: {}}'
# a pod failed and backoffLimit (0 in job.yaml) is used up: the Job is over
state backoff-limit-exceeded 1005 '.status = {ready: 0, failed: 1, startTime: "2026-01-01T00:00:01Z",
	uncountedTerminatedPods: {},
	conditions: [{type: "Failed", status: "True", reason: "BackoffLimitExceeded",
		message: "Job has reached the specified backoff limit",
		lastProbeTime: "2026-01-01T00:03:00Z", lastTransitionTime: "2026-01-01T00:03:00Z"}]}'
# activeDeadlineSeconds passed: its pod was killed, the Job is over
state deadline-exceeded 1006 '.status = {ready: 0, failed: 1, startTime: "2026-01-01T00:00:01Z",
	uncountedTerminatedPods: {},
	conditions: [{type: "Failed", status: "True", reason: "DeadlineExceeded",
		message: "Job was active longer than specified deadline",
		lastProbeTime: "2026-01-01T01:00:01Z", lastTransitionTime: "2026-01-01T01:00:01Z"}]}'
# `kubectl delete job --cascade=foreground` under way: still there, being deleted
state deleting 1007 '.metadata += {deletionTimestamp: "2026-01-01T00:02:00Z",
	deletionGracePeriodSeconds: 0, finalizers: ["foregroundDeletion"]}
	| .status = {active: 1, ready: 1, startTime: "2026-01-01T00:00:01Z", uncountedTerminatedPods: {}}'
# the image cannot be pulled (ErrImagePull, then ImagePullBackOff): that shows
# only in the pod's container status; the Job stays active, its pod not ready,
# as in active-pending (and so pending to sluice, until activeDeadlineSeconds)
state image-pull-backoff 1008 '.status = {active: 1, ready: 0, startTime: "2026-01-01T00:00:01Z",
	uncountedTerminatedPods: {}}'
# ended Complete, then removed by ttlSecondsAfterFinished (background deletion
# under way): it ended first, and that is what it says
state succeeded-deleting 1009 '.metadata += {deletionTimestamp: "2026-01-02T00:05:00Z",
	deletionGracePeriodSeconds: 0}
	| .status = {ready: 0, succeeded: 1, startTime: "2026-01-01T00:00:01Z",
	completionTime: "2026-01-01T00:05:00Z", uncountedTerminatedPods: {},
	conditions: [{type: "Complete", status: "True",
		lastProbeTime: "2026-01-01T00:05:00Z", lastTransitionTime: "2026-01-01T00:05:00Z"}]}'
# its pod was disrupted (node lost, preempted, evicted: pod condition
# DisruptionTarget) and the Job's podFailurePolicy rule FailJob matched (the
# rule sluice's Jobs carry; the message as pkg/controller/job words it)
state pod-failure-policy 1010 '.status = {ready: 0, failed: 1, startTime: "2026-01-01T00:00:01Z",
	uncountedTerminatedPods: {},
	conditions: [{type: "Failed", status: "True", reason: "PodFailurePolicy",
		message: ("Pod default/" + .metadata.name + "-x7k2p has condition DisruptionTarget matching FailJob rule at index 0"),
		lastProbeTime: "2026-01-01T00:04:00Z", lastTransitionTime: "2026-01-01T00:04:00Z"}]}'
# servers from 1.31: FailureTarget first, while the failed pod still terminates
# (status.terminating), then Failed; and SuccessCriteriaMet before Complete
state failure-target-131 1011 '.status = {ready: 0, failed: 1, terminating: 1,
	startTime: "2026-01-01T00:00:01Z", uncountedTerminatedPods: {},
	conditions: [{type: "FailureTarget", status: "True", reason: "BackoffLimitExceeded",
		message: "Job has reached the specified backoff limit",
		lastProbeTime: "2026-01-01T00:03:00Z", lastTransitionTime: "2026-01-01T00:03:00Z"}]}'
state failed-131 1012 '.status = {ready: 0, failed: 1, terminating: 0,
	startTime: "2026-01-01T00:00:01Z", uncountedTerminatedPods: {},
	conditions: [{type: "FailureTarget", status: "True", reason: "BackoffLimitExceeded",
		message: "Job has reached the specified backoff limit",
		lastProbeTime: "2026-01-01T00:03:00Z", lastTransitionTime: "2026-01-01T00:03:00Z"},
		{type: "Failed", status: "True", reason: "BackoffLimitExceeded",
		message: "Job has reached the specified backoff limit",
		lastProbeTime: "2026-01-01T00:03:01Z", lastTransitionTime: "2026-01-01T00:03:01Z"}]}'
state succeeded-131 1013 '.status = {ready: 0, succeeded: 1, terminating: 0,
	startTime: "2026-01-01T00:00:01Z", completionTime: "2026-01-01T00:05:00Z",
	uncountedTerminatedPods: {},
	conditions: [{type: "SuccessCriteriaMet", status: "True", reason: "CompletionsReached",
		message: "Reached expected number of succeeded pods",
		lastProbeTime: "2026-01-01T00:05:00Z", lastTransitionTime: "2026-01-01T00:05:00Z"},
		{type: "Complete", status: "True", reason: "CompletionsReached",
		message: "Reached expected number of succeeded pods",
		lastProbeTime: "2026-01-01T00:05:00Z", lastTransitionTime: "2026-01-01T00:05:00Z"}]}'
# deleted (or removed by ttlSecondsAfterFinished): get fails, exit status 1
name=$(jq -r .metadata.name "$base")
printf 'Error from server (NotFound): jobs.batch "%s" not found\n' "$name" >"$here/deleted.stderr"
echo 1 >"$here/deleted.status"
