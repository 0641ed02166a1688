// What a node's agent runs for a pod when pods are real processes (the local cloud,
// docs/local-cloud.md "Pods"): the containers' commands, arguments, working directories and
// environment, resolved on the server from the job as submitted. Pure: no I/O, no clock.
//
// The environment of a container, in order (a later name replaces an earlier one):
//  1. what Kubeflow's training operator gives a PyTorchJob's pods: PYTHONUNBUFFERED, MASTER_ADDR
//     (the address of the master pod's node: there is no cluster DNS), MASTER_PORT, WORLD_SIZE,
//     RANK, and PET_NNODES, PET_NODE_RANK, PET_NPROC_PER_NODE, PET_MASTER_ADDR, PET_MASTER_PORT
//     for torchrun; NVIDIA_VISIBLE_DEVICES with the GPUs the node gave the pod (when any);
//  2. the container's own `env`, `value` or `valueFrom.fieldRef` (metadata.name,
//     metadata.namespace, metadata.labels['…'], metadata.annotations['…'], spec.nodeName,
//     status.podIP, status.hostIP); other sources (secrets, config maps, resource fields) are
//     empty — there is no secret store — and say so in the pod spec's Warnings.
// A service job's pod runs serviceRequestPayload.AlgorithmSpecification.ContainerEntrypoint +
// ContainerArguments with its Environment when the payload names an entrypoint; otherwise it
// sleeps for the job's duration (forever without one).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/json.h"
#include "core/result.h"
#include "model/job.h"

namespace gf::workload {

// What the server knows of where one pod runs.
struct PodPlacement {
  size_t index = 0;            // in the job's pod order (pod-set order)
  std::string node;            // instance id
  std::string node_address;    // its address (the agent's), "127.0.0.1" on the local cloud
  std::string master_address;  // the address of the node of the job's first pod
  std::vector<int32_t> gpus;   // GPU indices of the node given to this pod
  int64_t placement = 0;       // the job's placement (Job::placements)
};

// The pod spec an agent runs: {Name, Namespace, JobId, JobName, Placement, Role, Index,
// RestartPolicy, GracePeriodSeconds, Gpus, Labels, Containers[{Name, Image, Command, Args,
// WorkingDir, Env[{Name, Value}], Limits}], Warnings}. An error when the job's request has no
// pod template for that pod (a record from an incompatible release).
Result<Json> pod_spec(const Job& job, const PodPlacement& where);

// The GPUs a pod of `set` asks for (0 when none; every GPU of the node for a whole-node pod).
int64_t pod_gpus(const JobPodSet& set, int32_t node_gpus);

// MASTER_PORT of a job on one machine: the master container's port named pytorchjob-port when the
// template names one, else a port in [20000, 40000) derived from the job id (Kubeflow's 23456
// cannot serve two jobs on one host).
int32_t master_port(const Job& job);

}  // namespace gf::workload
