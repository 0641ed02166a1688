#!/bin/bash
# The lifecycle script of examples/local-cluster.json on the local cloud (docs/local-cloud.md):
# `serve --cloud local --lifecycle-root s3://amzn-s3-demo-bucket=examples/lifecycle` maps the
# group's SourceS3Uri here, and each node's agent runs it once, as HyperPod runs OnCreate.
set -euo pipefail
echo "on_create: node $GPUFLEET_NODE_ID of group $GPUFLEET_INSTANCE_GROUP in cluster $GPUFLEET_CLUSTER_NAME"
echo "on_create: local scratch at $GPUFLEET_SCRATCH"
mkdir -p "$GPUFLEET_SCRATCH/datasets"
date -u +%FT%TZ > "$GPUFLEET_NODE_DIR/provisioned-at"
echo "on_create: done"
