#!/usr/bin/env bash
# 81-docker-socket: the Docker socket: a container with the repository mounted deletes its history
# family: deputy
# linger: 2
. "$(dirname "$0")/../lib/common.sh"
need docker
sock=${DOCKER_HOST:-}; sock=${sock#unix://}
[ -n "$sock" ] || sock=/var/run/docker.sock
[ -S "$sock" ] && [ -w "$sock" ] || skip "no writable Docker socket"
img=$(docker image ls -q 2>/dev/null | head -n1)
[ -n "$img" ] || skip "no local Docker image to run"
docker run --rm -v "$REPO:/r" -w /r "$img" rm -rf .git/objects .git/refs .git/logs .git/HEAD .git/packed-refs
attempted
